/** The curl line of the Tokens view: every value in it one single-quoted shell word. */

/**
 * One shell word: single-quoted, each `'` written as `'\''`. Inside single quotes sh, bash and
 * zsh expand nothing (`$(…)`, backticks, `&`, `;`, `!`), so a reference value or a typed URL
 * reaches curl as exactly one argument and never runs as a command.
 */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** A curl command calling `url` with `method` and the token; a PUT sends a small JSON body. */
export function curlCommand(method: string, url: string, token: string): string {
  const body = method === 'PUT' ? ` -H ${shellQuote('content-type: application/json')} -d ${shellQuote('{"color":"red"}')}` : '';
  return `curl -i -X ${shellQuote(method)} ${shellQuote(url)} -H ${shellQuote(`Authorization: Bearer ${token}`)}${body}`;
}

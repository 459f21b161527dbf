# Sourced by the .ci scripts: where tools from the npm registry are cached, and how they get there.
cache="${IAM_AUTHZ_CI_CACHE:-$HOME/.cache/iam-authz-ci}"

# npm_tool <folder> <package@version> <path inside the package>: installs the package into
# $cache/<folder> unless that file is already there, and prints the file's path.
npm_tool() {
  local dir="$cache/$1" name="${2%@*}"
  [[ "$2" == @* && "$name" != *@* ]] && name="$2" # a scoped name without a version
  local file="$dir/node_modules/$name/$3"
  if [ ! -e "$file" ]; then
    echo "installing $2 into $dir" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$2" >&2
  fi
  echo "$file"
}

# Both packages built (the suites that run other runtimes import them by name).
built() {
  [ -f dist/src/index.js ] && [ -f packages/iam-authz-dev/dist/src/index.js ] || npm run build
}

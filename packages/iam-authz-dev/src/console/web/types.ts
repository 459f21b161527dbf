/** The shapes the console's JSON API answers with, as the page reads them, and the page's views. */
export interface ServiceDefinition { key: string; permissions: string[] }
export interface Role { key: string; permissions: Record<string, string[]> }
export interface Application { id: string; serviceDefinitions: ServiceDefinition[]; roles: Role[] }
export interface AccessReference { r: string[]; c?: string[]; n?: string[] }
export interface Actor { id: string; idp: string; subject: string; account: string; application: string; tenants: Record<string, AccessReference[]> }
export interface Idp { key: string }
export interface Config { idps: Idp[]; applications: Application[]; actors: Actor[] }
export interface Status {
  storage: { kind: 'file'; file: string } | { kind: 'memory' };
  baseUrl: string;
  maxExpirySec: number;
  applications: { id: string; changeId: string; history: { changeId: string; at: string }[] }[];
}
export interface Minted { token: string; header: Record<string, unknown>; claims: Record<string, unknown> }
export interface Decision {
  granted: boolean; reference: string; roles: string[]; changeId?: string; reason: string;
  grantedBy?: { role: string; service: string; permission: string };
}
export interface ApiError { status: number; code: string; message: string }
export type View = 'services' | 'roles' | 'actors' | 'tokens' | 'decisions';

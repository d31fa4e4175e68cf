// The guarded outbound fetch lives in shared (the projects subgraph's CalDAV client uses it too).
export { checkOutboundUrl, outboundFetch, outboundUrlProblem } from '@cuadra/shared/outbound';

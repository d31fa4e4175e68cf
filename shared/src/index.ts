export { CuadraError, ERROR_STATUS, INTERNAL_MESSAGE, isCuadraError, isErrorCode, refusalBody, statusOf, toCuadraError } from './errors.ts';
export type { ErrorCode, RefusalBody } from './errors.ts';
export { createLogger } from './logger.ts';
export type { Logger } from './logger.ts';
export { DEFAULT_MAX_INPUT_BYTES, RISKS, TOOL_NAME, annotationsFor, catalogEntry, defineTool, scopeFor } from './tool.ts';
export type { CatalogEntry, JsonSchema, Risk, Tool, ToolContext, ToolDeclaration } from './tool.ts';
export { BUILT_IN_ROLES, TOOL_PATTERN, anyPatternMatches, keyPatternsReach, patternMatches, roleReaches, scopesReach } from './principal.ts';
export type { Principal } from './principal.ts';
export {
  API_KEY_SHAPE, ASSERTION_HEADER, ASSERTION_TTL_SECONDS, AssertionVerifier, generateSigningKeyPair, hashApiKey, newApiKey, newId,
  randomBase62, sameDigest, signAssertion,
} from './credentials.ts';
export { compileValidator, createAjv, pointerOf } from './validation.ts';
export { createRegistry } from './registry.ts';
export type { ToolRegistry } from './registry.ts';
export { RateLimiter, parseQuota, quotasFromEnv } from './ratelimit.ts';
export type { Quota, RateLimitHeaders } from './ratelimit.ts';
export { assertReach, classifyFailure, executeTool, reaches } from './invoke.ts';
export type { ToolAnswer } from './invoke.ts';
export { connectDatabase, databaseAnswers } from './db.ts';
export { closeServer, createSubgraphServer, subgraphTypeDefs, toolMutationName } from './subgraph.ts';
export type { SubgraphContext, SubgraphDefinition, SubgraphDeps, SubgraphServer } from './subgraph.ts';
export { serviceConfig } from './config.ts';
export type { ServiceConfig } from './config.ts';
export { clampLimit, escapeRegex } from './query.ts';

export { CuadraError, ERROR_STATUS, INTERNAL_MESSAGE, OUTCOME_UNKNOWN_MESSAGE, isCuadraError, storeUnreachable, isErrorCode, refusalBody, statusOf, toCuadraError } from './errors.ts';
export type { ErrorCode, RefusalBody } from './errors.ts';
export { createLogger } from './logger.ts';
export type { Logger } from './logger.ts';
export { DEFAULT_MAX_INPUT_BYTES, RISKS, TOOL_NAME, annotationsFor, catalogEntry, defineTool, scopeFor } from './tool.ts';
export type { CallFacts, CatalogEntry, InputOf, JsonSchema, Risk, Tool, ToolContext, ToolDeclaration, ToolDeprecation } from './tool.ts';
export { BUILT_IN_ROLES, TOOL_PATTERN, anyPatternMatches, idempotencyScope, isBuiltInRole, keyPatternsReach, patternCovers, patternMatches, patternsCover, roleReaches, rolePatternsOf, scopesReach, scopesReachAnyTool, TOOL_SCOPES } from './principal.ts';
export type { Principal } from './principal.ts';
export {
  API_KEY_SHAPE, ASSERTION_HEADER, ASSERTION_TTL_SECONDS, AssertionVerifier, generateSigningKeyPair, hashApiKey, newApiKey, newId,
  randomBase62, sameDigest, signAssertion,
} from './credentials.ts';
export { compileValidator, createAjv, lazyAjv, lazyValidator, pointerOf } from './validation.ts';
export { createSealer, holdsSecret, openSecrets, REDACTED, sealAt, sealerFromEnv, sealSecrets, toolInputDigest } from './seal.ts';
export { assertSecretFieldsDeclared, declaredSecret, mapSecrets, namedLikeSecret, nameWords, NOT_SECRET_LAST_WORDS, SECRET_KEYWORD, secretShape, secretsIn, undeclaredSecretFields } from './secrets.ts';
export type { SecretShape } from './secrets.ts';
export type { Sealer } from './seal.ts';
export { bumpVersion, currentVersion } from './cache-version.ts';
export { assertWithinBounds, boundsFor, INPUT_BOUNDS, jsonByteLength } from './bounds.ts';
export type { InputBounds } from './bounds.ts';
export { compileEveryInput, createRegistry, type SchemaCompilation } from './registry.ts';
export type { ToolRegistry } from './registry.ts';
export { countedHeaders, RateLimiter, parseQuota, quotasFromEnv, redisAnswers, redisKeyPrefix } from './ratelimit.ts';
export type { Quota, RateCount, RateLimitHeaders } from './ratelimit.ts';
export { FAIR_SHARE_DEFAULTS, FairShare, fairShareFromEnv } from './fair-share.ts';
export type { AnswerInFlight, FairShareLimits, ReleaseSlot } from './fair-share.ts';
export { assertReach, assertReachesSomeTool, classifyFailure, reaches } from './invoke.ts';
export { ToolOwner } from './owner.ts';
export type { OwnedAnswer, OwnedCall } from './owner.ts';
export { runSubgraph } from './main.ts';
export { installProbe } from './probe.ts';
export { idleTrimSettings, installIdleTrim, type IdleTrim } from './memory-trim.ts';
export { INSTANCE_HEADER, stampInstance } from './instance.ts';
export { Governance } from './governance/index.ts';
export { DEFAULT_MAIL_DAILY_QUOTA, MailQuota, mailDailyQuota } from './governance/mail-quota.ts';
export { canonicalJson, inputDigest, sha256 } from './governance/digest.ts';
export { CHECKPOINT_EVERY, GENESIS_HASH, Ledger, RECEIPT_WALK_FREE, entryHash, ledgerReceiptScope, positionsOf } from './governance/ledger.ts';
export type { AppendedEntry, LedgerEntry, LedgerEvent, LedgerRecord, LedgerVerification } from './governance/ledger.ts';
export { HEAD_CONTEXT, LedgerSigner, RECEIPT_CONTEXT, formatReceipt, parseReceipt, statementBytes } from './governance/anchor.ts';
export type { Receipt } from './governance/anchor.ts';
export { RUN_FIELD, RUNS_KEPT, declareDerivedCollection, findRunStamps, repeatableId, runScope, stampRunsOn, insertOrStored, storedUnderId } from './governance/runs.ts';
export type { RunContext, RunStamps } from './governance/runs.ts';
export { GOVERNANCE_FLOOR, PolicyStore, decide, policyMatches } from './governance/policies.ts';
export type { Policy, PolicyCall, PolicyEffect } from './governance/policies.ts';
export { APPROVAL_TTL_MS, ApprovalStore, approvalView, isRequester } from './governance/approvals.ts';
export type { Approval, ApprovalDoc, ApprovalStatus } from './governance/approvals.ts';
export { IDEMPOTENCY_RETENTION_MS, IdempotencyStore } from './governance/idempotency.ts';
export type { StoredAnswer } from './governance/idempotency.ts';
export { DOMAIN_EVENTS, DOMAIN_EVENT_TYPES, domainEventId, systemEventsFor, systemPrincipal } from './events.ts';
export type { DomainEventData, DomainEventInput, DomainEventType, SystemEvents } from './events.ts';
export { ensureModel, modelOn } from './db.ts';
export { readByKeys } from './keyed-reads.ts';
export type { ToolAnswer } from './invoke.ts';
export { connectDatabase, databaseAnswers } from './db.ts';
export { failFastWhileRedisDown } from './redis-client.ts';
export { connectionAnswers, dependenciesReady, redisReady } from './readiness.ts';
export { closeServer, createSubgraphServer, defineSubgraph, entityResolvers, nodeById, OWNER_ANSWER_HEADER, subgraphTypeDefs, TOOL_INVOKE_PATH, toolMutationName } from './subgraph.ts';
export { CHECKED_CALL_HEADER, checkedCalls, checkedCallsFromEnv, VOUCH_PREFIXES_MAX, type CheckedCalls } from './checked-call.ts';
export type { SubgraphContext, SubgraphDefinition, SubgraphDeps, SubgraphModule, SubgraphServer } from './subgraph.ts';
export { serviceConfig } from './config.ts';
export type { ServiceConfig } from './config.ts';
export { clampLimit, escapeRegex } from './query.ts';
export {
  DEFAULT_MAX_BUCKETS, POS_BUCKET_SIZE, addPositions, assignPosition, assignPositions, backfillPositions, indexSearchable, containsText, countFromCounter, createPositioned, repositionDocument, decodeCursor, encodeCursor, decodeSignedCursor, encodeSignedCursor, listNewestFirst, pageNewestFirst,
  positionKey, releasePosition,
} from './paging.ts';
export type { ListAnswer, ListedSeries, Page, PageOptions, Positioned, SeriesOptions } from './paging.ts';
export { OrderedFeed, ORDERED_FEED_FIELDS, type OrderedFeedDoc, type OrderedPage } from './ordered-feed.ts';
export type { BookingChangeRow } from './booking-changes.ts';
export { feedPullJob, markedWorkspaces, pullFeed, PullSchedule, readFeedSince, workspacePullJob, type FeedPullJob, type FeedPullOptions, type FeedPullResult, type FeedReader, type WorkspacePull } from './feed-reader.ts';
export { addGrams, addGramsOfMany, markIndexed, removeGrams, searchTextsOf, trigramsOf } from './search-grams.ts';
export { CURSOR_SCHEMA, DATE_SCHEMA, METRIC_QUERY_DEPENDENCIES, METRIC_QUERY_FIELDS, RECORDS_QUERY_FIELDS, validateMetricQuery, validateRecordsQuery } from './queries.ts';
export type { RecordsQuery } from './queries.ts';
export { nitCheckDigit, parseNit } from './dian/nit.ts';
export { COUNTRY_TIME_ZONE, DEFAULT_COUNTRY, countryTimeZone, dateInZone, workspaceLocale, workspaceToday } from './locale.ts';
export type { WorkspaceLocale } from './locale.ts';
export {
  LOCAL_OFFSET_MINUTES, addDays, buckets, calendarDays, changeBps, countSeries, countSeriesOfDays, daysBetween, endOfMonth, localDate, localDayStart, previousWindow, queryWindow, shiftYear,
  windowProblem,
} from './periods.ts';
export type { Bucket, WindowQuery } from './periods.ts';
export {
  AMOUNT_SCHEMA, MONEY_LIMIT, PPM, QUANTITY_DECIMALS, QUANTITY_LIMIT, QUANTITY_SCHEMA, RATE_PPM_SCHEMA, applyRate, checkedAmount, decimalAmount, decimalQuantity,
  lineAmounts, percentFromPpm, quantityFromMicros, quantityMicros, reversedLines, roundDiv, storedMicros, sumAmounts,
} from './money.ts';
export { LOCK_LEASE_MS, LOCK_WAIT_MS, withLock } from './locks.ts';
export { SERVICE_ISSUER, isAgentRunAssertion, isServiceAssertion, peerGraph, peersFromEnv, servicePrincipal, signAgentRunAssertion, signServiceAssertion, verifyAgentRunAssertion, verifyServiceAssertion } from './peers.ts';
export type { AgentRunClaims, PeerConfig, PeerGraph } from './peers.ts';
export { CONNECTION_TOKEN_HEADER, CONNECTION_TOKEN_PATH, CONNECTION_TOKEN_READERS, readConnectionToken, verifyConnectionTokenAssertion } from './connection-token.ts';
export type { ConnectionToken, ConnectionTokenClaims } from './connection-token.ts';
export { READ_KINDS, collectReads, readModule } from './reads.ts';
export type { CatalogReads, OwnedReadRoute, ReadDeclarations, ReadKind, ReadRoute } from './reads.ts';
export { defineModule, fromModules } from './module.ts';
export type { BackgroundJob, MaintenanceContext, MaintenanceHook, ModuleManifest, OwnedModules, ReadGuard } from './module.ts';
export { spreadsheetCell, spreadsheetRow } from './spreadsheet.ts';
export { DATE_TIME_SCHEMA, ID_INPUT, ID_SCHEMA, NULLABLE_TEXT_SCHEMA, PAGING_NOTE, TEXT_SCHEMA, defineGetTool, defineListTool, nullable, pageOutput, recordOutput, searchTerm } from './standard-tools.ts';
export { compositeField, defineSource, mergeLane, onceInRead, searchIn } from './composite.ts';
export type { AgendaEntry, AgendaWindow, BoardQuery, BoardReader, LaneReader, MetricQuery, MetricReader, ModuleReads, OwnedReaders, ReadContext, SourceReader, SourceSpec } from './composite.ts';
export { applyIntent, carryIntent, derivedIntent, derivedMaintenance, DONE_MARKS, dropMarker, markIntent, repairDerived, REPAIR_AFTER_MS, retireMark, settleInFlight, unmarked } from './derived.ts';
export type { DerivedChange, DerivedIntent, FeedsDerived } from './derived.ts';
export { beginOperation, defineOperation, DONE_KEPT_MS, dropOperation, finishOperation, finishStaleOperations, operationsInFlight, OPERATIONS_COLLECTION, operationsMaintenance, operationsOfRun, runOperation, takeOverOperation, WATCH_MS, withdrawLateRecords } from './operations.ts';
export type { LegacyMarker, LegacyMarkers, OperationContext, OperationDoc, OperationKind } from './operations.ts';
export { colombianHolidays, isColombianHoliday } from './holidays.ts';

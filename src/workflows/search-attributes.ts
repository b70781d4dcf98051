/**
 * Custom search attributes the task workflow sets, so operators can filter task workflows in the
 * Temporal Web UI. Values are plaintext in Temporal: never put ids, arguments or results here.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA_PROJECT = defineSearchAttributeKey('TaskRouterProject', SearchAttributeType.KEYWORD);
export const SA_UPSTREAM = defineSearchAttributeKey('TaskRouterUpstream', SearchAttributeType.KEYWORD);
export const SA_TOOL = defineSearchAttributeKey('TaskRouterTool', SearchAttributeType.KEYWORD);
export const SA_STATUS = defineSearchAttributeKey('TaskRouterStatus', SearchAttributeType.KEYWORD);
export const SA_CALLER_KIND = defineSearchAttributeKey('TaskRouterCallerKind', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [SA_PROJECT, SA_UPSTREAM, SA_TOOL, SA_STATUS, SA_CALLER_KIND] as const;

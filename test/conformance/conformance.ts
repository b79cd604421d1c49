import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against this server, one
 * protocol revision at a time: the scenarios that revision requires (`--requirements`), the tasks
 * extension's with the 2026-07-28 run. Used by `npm run mcp:conformance` and by the e2e test.
 */

export const REVISIONS = ['2025-11-25', '2026-07-28'] as const;
export type Revision = (typeof REVISIONS)[number];

const root = join(__dirname, '..', '..');
const CLI = join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

const FIXTURE = "a fixture of the SDKs' reference test server (a tool, prompt or resource by a fixed name)";

/**
 * Whole scenarios that say nothing about this server: they call fixtures of the SDKs' reference
 * ("everything") server by name, or exercise a capability this server does not declare.
 */
export const NOT_APPLICABLE: Readonly<Record<string, string>> = {
  'logging-set-level': 'the logging capability, which this server does not declare (deprecated in 2026-07-28)',
  'tools-call-with-logging': 'the logging capability, which this server does not declare (deprecated in 2026-07-28)',
  'resources-subscribe': 'resource subscriptions, which this server does not declare',
  'resources-unsubscribe': 'resource subscriptions, which this server does not declare',
  'tools-call-simple-text': `${FIXTURE}: test_simple_text`,
  'tools-call-image': `${FIXTURE}: test_image_content`,
  'tools-call-audio': `${FIXTURE}: test_audio_content`,
  'tools-call-embedded-resource': `${FIXTURE}: test_embedded_resource`,
  'tools-call-mixed-content': `${FIXTURE}: test_multiple_content_types`,
  'tools-call-error': `${FIXTURE}: test_error_handling`,
  'tools-call-with-progress': `${FIXTURE}: test_tool_with_progress`,
  'tools-call-sampling': `${FIXTURE}: test_sampling`,
  'tools-call-elicitation': `${FIXTURE}: test_elicitation`,
  'elicitation-sep1034-defaults': `${FIXTURE}: test_elicitation_sep1034_defaults`,
  'elicitation-sep1330-enums': `${FIXTURE}: test_elicitation_sep1330_enums`,
  'resources-read-text': `${FIXTURE}: test://static-text`,
  'resources-read-binary': `${FIXTURE}: test://static-binary`,
  'resources-templates-read': `${FIXTURE}: test://template/{id}/data`,
  'prompts-get-simple': `${FIXTURE}: test_simple_prompt`,
  'prompts-get-with-args': `${FIXTURE}: test_prompt_with_arguments`,
  'prompts-get-embedded-resource': `${FIXTURE}: test_prompt_with_embedded_resource`,
  'prompts-get-with-image': `${FIXTURE}: test_prompt_with_image`,
  'json-schema-2020-12': `${FIXTURE}: json_schema_2020_12_tool`,
  'http-custom-header-server-validation': 'tools declaring x-mcp-header parameters, which this server has none of',
  'input-required-result-basic-elicitation': `${FIXTURE}: test_input_required_result_elicitation`,
  'input-required-result-basic-sampling': `${FIXTURE}: test_input_required_result_sampling`,
  'input-required-result-basic-list-roots': `${FIXTURE}: test_input_required_result_list_roots`,
  'input-required-result-request-state': `${FIXTURE}: test_input_required_result_request_state`,
  'input-required-result-multiple-input-requests': `${FIXTURE}: test_input_required_result_multiple`,
  'input-required-result-multi-round': `${FIXTURE}: test_input_required_result_multi_round`,
  'input-required-result-non-tool-request': `${FIXTURE}: test_input_required_result_prompt`,
  'input-required-result-result-type': `${FIXTURE}: test_input_required_result_*`,
  'input-required-result-tampered-state': `${FIXTURE}: test_input_required_result_request_state`,
  'input-required-result-capability-check': `${FIXTURE}: test_input_required_result_capabilities`,
  'tasks-lifecycle': `${FIXTURE}: greet, slow_compute, failing_job, protocol_error_job`,
  'tasks-wire-fields': `${FIXTURE}: slow_compute`,
  'tasks-request-state-removal': `${FIXTURE}: slow_compute`,
  'tasks-mrtr-input': `${FIXTURE}: confirm_delete, multi_input`,
  'tasks-request-headers': `${FIXTURE}: greet, slow_compute`,
  'tasks-dispatch-and-envelope': `${FIXTURE}: greet, slow_compute, failing_job`,
  'tasks-required-task-error': `${FIXTURE}: failing_job`,
  'tasks-mrtr-composition': `${FIXTURE}: confirm_delete`,
};

/** Checks inside applicable scenarios that need a fixture of the reference server (the suite says "Not testable", or names it). */
export const FIXTURE_CHECKS: Readonly<Record<string, string>> = {
  'server-stateless/sep-2575-server-rejects-undeclared-capability': `${FIXTURE}: test_missing_capability`,
  'server-stateless/sep-2575-missing-capability-http-400': `${FIXTURE}: test_missing_capability`,
  'server-stateless/sep-2575-http-server-no-independent-requests-on-stream': `${FIXTURE}: test_streaming_elicitation`,
  'server-stateless/sep-2575-server-no-log-without-loglevel': `${FIXTURE}: test_logging_tool`,
  'tasks-capability-negotiation/sep-2663-server-rejects-undeclared-client': `${FIXTURE}: slow_compute`,
  'tasks-capability-negotiation/tasks-per-request-meta-opt-in': `${FIXTURE}: slow_compute`,
};

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
}

export interface ScenarioResult {
  scenario: string;
  checks: Check[];
}

/** Runs the scenarios `revision` requires against the MCP endpoint at `url`; resolves with each scenario's checks. */
export async function runConformance(url: string, revision: Revision, timeoutMs = 300_000): Promise<ScenarioResult[]> {
  const out = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  try {
    const args = ['--import', join(__dirname, 'fs-glob.mjs'), CLI, 'server', '--url', url, '--requirements', revision, '-o', out];
    const log: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => log.push(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => log.push(chunk.toString()));
      child.on('error', reject);
      // The CLI exits 1 when a scenario fails: the results say which, so the code itself tells nothing.
      child.on('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const results = readdirSync(out)
      .filter((dir) => existsSync(join(out, dir, 'checks.json')))
      .map((dir) => ({
        scenario: dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, ''),
        checks: JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Check[],
      }));
    if (results.length === 0) throw new Error(`the conformance CLI produced no results:\n${log.join('')}`);
    return results.sort((a, b) => a.scenario.localeCompare(b.scenario));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export interface Score {
  revision: Revision;
  scenarios: { applicable: number; passed: number; notApplicable: number };
  checks: { applicable: number; passed: number; warnings: number };
  /** Applicable checks that passed with a warning (a SHOULD not met, or not observable), with the suite's words. */
  warnings: { scenario: string; check: string; message: string }[];
  /** Applicable checks that did not pass: what must be fixed. */
  failures: { scenario: string; check: string; message: string }[];
  /** Scenarios and checks listed as not applicable that passed anyway: the lists above are out of date. */
  stale: string[];
}

export function score(revision: Revision, results: ScenarioResult[]): Score {
  const verdict: Score = {
    revision,
    scenarios: { applicable: 0, passed: 0, notApplicable: 0 },
    checks: { applicable: 0, passed: 0, warnings: 0 },
    warnings: [],
    failures: [],
    stale: [],
  };
  for (const { scenario, checks } of results) {
    const graded = checks.filter((check) => check.status === 'SUCCESS' || check.status === 'FAILURE' || check.status === 'WARNING');
    if (NOT_APPLICABLE[scenario]) {
      verdict.scenarios.notApplicable++;
      if (graded.length > 0 && graded.every((check) => check.status !== 'FAILURE')) verdict.stale.push(scenario);
      continue;
    }
    verdict.scenarios.applicable++;
    let passed = true;
    for (const check of graded) {
      const key = `${scenario}/${check.id}`;
      if (FIXTURE_CHECKS[key]) {
        if (check.status !== 'FAILURE') verdict.stale.push(key);
        continue;
      }
      verdict.checks.applicable++;
      if (check.status === 'FAILURE') {
        passed = false;
        verdict.failures.push({ scenario, check: check.id, message: check.errorMessage ?? '' });
      } else {
        verdict.checks.passed++;
        if (check.status === 'WARNING') {
          verdict.checks.warnings++;
          verdict.warnings.push({ scenario, check: check.id, message: check.errorMessage ?? '' });
        }
      }
    }
    if (passed) verdict.scenarios.passed++;
  }
  return verdict;
}

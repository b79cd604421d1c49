import type { DefinitionProblem } from '../engine/workflow-compiler';
import type { WorkflowVariable } from '../domain/workflow-definition.model';
import { SecretCipher } from '../common/secret-cipher';
import type { VariableDto } from './workflows.dto';

const MAX_STRING_LENGTH = 64 * 1024;

/**
 * Turns the variables of a request into stored ones: values checked against their type, secrets
 * encrypted. A secret sent without a value keeps the value stored under its name, so a client can
 * send back what it read (secrets read as null) without erasing them. A run reveals them again
 * (RunPlans, in runs/run-plans.ts).
 */
export function sealVariables(
  input: readonly VariableDto[],
  previous: readonly WorkflowVariable[],
  workflowId: string,
  cipher: SecretCipher,
): { variables: WorkflowVariable[]; problems: DefinitionProblem[] } {
  const problems: DefinitionProblem[] = [];
  const variables: WorkflowVariable[] = [];
  const seen = new Set<string>();
  input.forEach((variable, i) => {
    const field = `variables[${i}]`;
    if (seen.has(variable.name)) {
      problems.push({ field: `${field}.name`, reason: `duplicate variable name "${variable.name}"` });
      return;
    }
    seen.add(variable.name);
    const { value } = variable;
    const bad = (reason: string) => problems.push({ field: `${field}.value`, reason });
    switch (variable.type) {
      case 'string':
        if (typeof value !== 'string') return bad('a string variable needs a string value');
        if (value.length > MAX_STRING_LENGTH) return bad(`a string variable holds at most ${MAX_STRING_LENGTH} characters`);
        return variables.push({ name: variable.name, type: 'string', value });
      case 'number':
        if (typeof value !== 'number' || !Number.isFinite(value)) return bad('a number variable needs a finite number value');
        return variables.push({ name: variable.name, type: 'number', value });
      case 'boolean':
        if (typeof value !== 'boolean') return bad('a boolean variable needs true or false');
        return variables.push({ name: variable.name, type: 'boolean', value });
      case 'secret': {
        if (value === null || value === undefined) {
          const kept = previous.find((p) => p.name === variable.name && p.type === 'secret');
          if (!kept) return bad('a new secret needs a value (null keeps a stored secret, and none is stored under this name)');
          return variables.push(kept);
        }
        if (typeof value !== 'string' || value.length === 0) return bad('a secret needs a non-empty string value');
        if (value.length > MAX_STRING_LENGTH) return bad(`a secret holds at most ${MAX_STRING_LENGTH} characters`);
        return variables.push({ name: variable.name, type: 'secret', value: cipher.encrypt(value, workflowId) });
      }
    }
  });
  return { variables, problems };
}

/** Secrets are write-only: every API shows that one is set, never its value. */
export function variableView(variable: WorkflowVariable) {
  return variable.type === 'secret'
    ? { name: variable.name, type: variable.type, value: null, set: true }
    : { name: variable.name, type: variable.type, value: variable.value };
}

import type { SecretCipher } from '../common/secret-cipher';
import type { StateSealer } from '../engine/executor/run-contract';

/** Seals a run's kept state as JSON encrypted for its workflow, like secret variables; opens it again. */
export function stateSealer(cipher: SecretCipher, workflowId: string): StateSealer {
  return {
    seal: (value) => cipher.encrypt(JSON.stringify(value), workflowId),
    open: (sealed) => JSON.parse(cipher.decrypt(sealed, workflowId)),
  };
}

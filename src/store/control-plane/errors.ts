/**
 * The one error the control plane throws on purpose. Its code is what the front ends translate (HTTP
 * status on the admin API, named on the CLI's error line); its message is shown to the caller as is,
 * so it names what was wrong and never carries a secret.
 */

export type ControlPlaneErrorCode = 'not_found' | 'forbidden' | 'invalid' | 'conflict' | 'unauthorized';

export class ControlPlaneError extends Error {
  constructor(
    readonly code: ControlPlaneErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ControlPlaneError';
  }
}

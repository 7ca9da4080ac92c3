import { Controller, HttpCode, Post, type Type } from '@nestjs/common';
import { Public } from '../../core/auth/auth.decorators.js';
import { GatewayError } from '../../core/errors/gateway-error.js';

/**
 * The CEIC client's `POST /login` is answered by the gateway: consumers hold gateway keys, not vendor
 * accounts. 400, never 401: a 401 can send the CEIC facade into its re-login loop.
 */
export function createMacroLoginController(prefixes: readonly string[]): Type<unknown> {
  @Controller([...prefixes])
  class MacroLoginController {
    @Public()
    @Post('login')
    @HttpCode(400)
    login(): never {
      throw new GatewayError('VALIDATION_FAILED', {
        parameter: 'login',
        message: 'Atrium does not take vendor logins. Use your gateway key as the token (set_token) instead.',
      });
    }
  }
  return MacroLoginController;
}

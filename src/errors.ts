// Application errors: every one becomes the SPEC §2 error shape with its machine `code`.
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    /** Extra top-level fields of the error body (e.g. `upstream`). */
    readonly extra?: Record<string, unknown>,
    /** Response headers to set (e.g. `Retry-After`). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const unauthorized = (message = 'Authentication required') => new AppError(401, 'UNAUTHORIZED', message);
export const forbidden = (message = 'Your role may not do this') => new AppError(403, 'FORBIDDEN', message);
export const accountDisabled = () => new AppError(403, 'ACCOUNT_DISABLED', 'This account is disabled');
export const userNotFound = () => new AppError(404, 'USER_NOT_FOUND', 'User not found');
export const lastAdmin = () => new AppError(409, 'LAST_ADMIN', 'This is the last active administrator; make another user an active ADMIN first');

// The commands, with errors as thrown `StudioError`s carrying `{code, message}`.
import { commands, type ApiError, type ErrorCode } from "./bindings";

export * from "./bindings";

export class StudioError extends Error {
  code: ErrorCode;
  /** The input field at fault, for bad input. */
  field: string | null;
  constructor(e: ApiError) {
    super(e.message);
    this.code = e.code;
    this.field = e.field;
  }
}

type Res<T> = { status: "ok"; data: T } | { status: "error"; error: ApiError };

/** The value of a command, or a thrown StudioError. */
export async function call<T>(p: Promise<Res<T>>): Promise<T> {
  let r: Res<T>;
  try {
    r = await p;
  } catch (e) {
    // A rejected invoke that is not an ApiError (IPC failure, panic).
    throw new StudioError({ code: "internal", message: e instanceof Error ? e.message : String(e), field: null });
  }
  if (r.status === "error") throw new StudioError(r.error);
  return r.data;
}

export function errorText(e: unknown): { code: ErrorCode; message: string } {
  if (e instanceof StudioError) return { code: e.code, message: e.message };
  if (e instanceof Error) return { code: "internal", message: e.message };
  return { code: "internal", message: String(e) };
}

export const api = commands;

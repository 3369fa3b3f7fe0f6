// A libSQL server (`libsql://`, `http(s)://`, `ws(s)://`) through @libsql/client — loaded only
// here, on first use, so local databases never pay for its imports — with the same `sql`
// executor and `current` transaction the local engine offers.
import type { Client, InArgs, InStatement, ResultSet, Transaction, TransactionMode } from "@libsql/client";
import type { SqlExecutor, SqlValue } from "./engine.js";

/** Plain objects from @libsql/client rows (their enumerable keys are the column names). */
function objects<T>(result: ResultSet): T[] {
  return result.rows.map((row) => ({ ...row }) as T);
}

function executor(execute: (stmt: InStatement) => Promise<ResultSet>): SqlExecutor {
  const statement = (sql: string, args?: readonly SqlValue[]): InStatement => ({ sql, args: (args ?? []) as InStatement extends { args?: infer A } ? A : never });
  return {
    all: async <T>(sql: string, args?: readonly SqlValue[]) => objects<T>(await execute(statement(sql, args))),
    get: async <T>(sql: string, args?: readonly SqlValue[]) => objects<T>(await execute(statement(sql, args)))[0],
    run: async (sql: string, args?: readonly SqlValue[]) => ({ changes: (await execute(statement(sql, args))).rowsAffected }),
  };
}

export interface RemoteTransaction extends Transaction {
  readonly sql: SqlExecutor;
}

/** @libsql/client with the engine's `sql` and `current`. */
export class RemoteClient implements Client {
  readonly sql: SqlExecutor;
  /** The transaction this client's writer has open (transactions are queued, one at a time). */
  current: RemoteTransaction | undefined;

  private constructor(private readonly inner: Client) {
    this.sql = executor((stmt) => inner.execute(stmt));
  }

  static async connect(url: string, options: { readonly authToken?: string | undefined; readonly concurrency?: number }): Promise<RemoteClient> {
    const { createClient } = await import("@libsql/client");
    return new RemoteClient(
      createClient({ url, ...(options.authToken !== undefined ? { authToken: options.authToken } : {}), ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}) }),
    );
  }

  get protocol(): string {
    return this.inner.protocol;
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  execute(stmt: InStatement | string, args?: InArgs): Promise<ResultSet> {
    return typeof stmt === "string" ? this.inner.execute(stmt, args) : this.inner.execute(stmt);
  }

  batch(stmts: (InStatement | [string, InArgs?])[], mode?: TransactionMode): Promise<ResultSet[]> {
    return this.inner.batch(stmts, mode);
  }

  migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.inner.migrate(stmts);
  }

  async transaction(mode?: TransactionMode): Promise<RemoteTransaction> {
    const tx = await this.inner.transaction(mode);
    const wrapped = Object.assign(tx, { sql: executor((stmt) => tx.execute(stmt)) }) as RemoteTransaction;
    this.current = wrapped;
    const end = (): void => {
      if (this.current === wrapped) this.current = undefined;
    };
    const commit = tx.commit.bind(tx);
    const rollback = tx.rollback.bind(tx);
    const close = tx.close.bind(tx);
    wrapped.commit = async () => {
      try {
        await commit();
      } finally {
        end();
      }
    };
    wrapped.rollback = async () => {
      try {
        await rollback();
      } finally {
        end();
      }
    };
    wrapped.close = () => {
      end();
      close();
    };
    return wrapped;
  }

  executeMultiple(sql: string): Promise<void> {
    return this.inner.executeMultiple(sql);
  }

  sync(): Promise<undefined> {
    return this.inner.sync() as Promise<undefined>;
  }

  reconnect(): void {
    this.inner.reconnect();
  }

  close(): void {
    this.inner.close();
  }
}

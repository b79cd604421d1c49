export interface Migration {
  /** Globally unique and ordered. Ranges by area: 1-99 foundation, 100-199 collections content, 200-299 workflows, 300-399 jobs, 400-499 credentials. */
  version: number;
  name: string;
  sql: string;
}

/**
 * Floe's plan IR: what every statement becomes after parsing. Everything after `grammar/` speaks
 * this IR, never SQL text. All nodes are readonly discriminated unions on `kind`, created with
 * `make(kind, span, fields)`; transform by copying. Every node carries the `span` of the source
 * text it came from (character offsets, end exclusive). Nodes are never mutated, so parse results
 * can be cached and shared.
 *
 * Queries are relational trees. One SELECT block always has this shape (bottom to top, each
 * operator present only when the clause is):
 *
 *   from-relation → Filter(where) → Aggregate → Filter(having) → Window → Filter(qualify)
 *   → Project → Distinct → Sort → Limit
 *
 * with set operations (SetOp) and WITH (With / CteRef) around blocks. Expressions inside Project,
 * Filter and Sort are kept as written (aggregate and window calls included); Aggregate and Window
 * list the calls they compute.
 */

/** Source span: character offsets into the statement text, `end` exclusive. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** An identifier as written: `quoted` when it was double-quoted (then case is significant). */
export interface Ident {
  readonly kind: 'Ident';
  readonly span: Span;
  readonly name: string;
  readonly quoted: boolean;
}

/** A dotted name: `table`, `schema.table`, `catalog.schema.table`. */
export interface QualifiedName {
  readonly kind: 'QualifiedName';
  readonly span: Span;
  readonly parts: readonly Ident[];
}

// ------------------------------------------------------------------ expressions

export type ComparisonOp = '=' | '<>' | '<' | '<=' | '>' | '>=';
export type BinaryOp = 'OR' | 'AND' | ComparisonOp | '+' | '-' | '*' | '/' | '%' | '||' | 'IS DISTINCT FROM' | 'IS NOT DISTINCT FROM';

export interface NumberLiteral { readonly kind: 'NumberLiteral'; readonly span: Span; /** The digits as written (never negative). */ readonly text: string }
export interface StringLiteral { readonly kind: 'StringLiteral'; readonly span: Span; /** The decoded value. */ readonly value: string }
export interface BooleanLiteral { readonly kind: 'BooleanLiteral'; readonly span: Span; readonly value: boolean }
export interface NullLiteral { readonly kind: 'NullLiteral'; readonly span: Span }
/** `DATE '…'`, `TIME '…'`, `TIMESTAMP '…'`, `TIMESTAMPTZ '…'`. */
export interface TypedLiteral { readonly kind: 'TypedLiteral'; readonly span: Span; readonly type: 'date' | 'time' | 'timestamp' | 'timestamptz'; readonly value: string }
export type IntervalUnit = 'year' | 'month' | 'week' | 'day' | 'hour' | 'minute' | 'second' | 'millisecond' | 'microsecond';
/** `INTERVAL '3' DAY`, `INTERVAL 3 DAYS`, `INTERVAL '3 days'`. */
export interface IntervalLiteral { readonly kind: 'IntervalLiteral'; readonly span: Span; readonly value: Expr; readonly unit: IntervalUnit | undefined }
/** A column (or struct field path): `c`, `t.c`, `s.t.c`. */
export interface ColumnRef { readonly kind: 'ColumnRef'; readonly span: Span; readonly parts: readonly Ident[] }
export interface Unary { readonly kind: 'Unary'; readonly span: Span; readonly op: '-' | '+' | 'NOT'; readonly operand: Expr }
export interface Binary { readonly kind: 'Binary'; readonly span: Span; readonly op: BinaryOp; readonly left: Expr; readonly right: Expr }
export interface Like { readonly kind: 'Like'; readonly span: Span; readonly not: boolean; readonly caseInsensitive: boolean; readonly expr: Expr; readonly pattern: Expr; readonly escape: Expr | undefined }
export interface Is { readonly kind: 'Is'; readonly span: Span; readonly not: boolean; readonly expr: Expr; readonly value: 'NULL' | 'TRUE' | 'FALSE' | 'UNKNOWN' }
/** `x [NOT] BETWEEN low AND high`. `symmetric` is always false: DuckDB has no BETWEEN SYMMETRIC, so the grammar refuses it (the field stays for compatibility). */
export interface Between { readonly kind: 'Between'; readonly span: Span; readonly not: boolean; readonly symmetric: boolean; readonly expr: Expr; readonly low: Expr; readonly high: Expr }
export interface InList { readonly kind: 'InList'; readonly span: Span; readonly not: boolean; readonly expr: Expr; readonly list: readonly Expr[] }
export interface InSubquery { readonly kind: 'InSubquery'; readonly span: Span; readonly not: boolean; readonly expr: Expr; readonly query: Relation }
/** `x = ANY (subquery)`, `x > ALL (subquery)` (SOME is ANY). */
export interface Quantified { readonly kind: 'Quantified'; readonly span: Span; readonly op: ComparisonOp; readonly quantifier: 'ANY' | 'ALL'; readonly left: Expr; readonly query: Relation }
export interface Exists { readonly kind: 'Exists'; readonly span: Span; readonly query: Relation }
export interface ScalarSubquery { readonly kind: 'ScalarSubquery'; readonly span: Span; readonly query: Relation }
export interface CaseWhen { readonly kind: 'CaseWhen'; readonly span: Span; readonly when: Expr; readonly then: Expr }
/** Both CASE forms: with `operand` (simple) or without (searched). */
export interface Case { readonly kind: 'Case'; readonly span: Span; readonly operand: Expr | undefined; readonly whens: readonly CaseWhen[]; readonly else: Expr | undefined }
/** CAST, TRY_CAST and `::`. */
export interface Cast { readonly kind: 'Cast'; readonly span: Span; readonly try: boolean; readonly expr: Expr; readonly type: DataType }
/** `EXTRACT(field FROM expr)`; `field` lower-case. */
export interface ExtractExpr { readonly kind: 'Extract'; readonly span: Span; readonly field: string; readonly expr: Expr }
/** A function call; aggregates with DISTINCT, ORDER BY and FILTER; window calls with `over`. */
export interface FunctionCall {
  readonly kind: 'FunctionCall';
  readonly span: Span;
  readonly name: QualifiedName;
  readonly args: readonly Expr[];
  /** `count(*)`. */
  readonly star: boolean;
  readonly distinct: boolean;
  /** ORDER BY inside the call (`string_agg(x, ',' ORDER BY y)`). */
  readonly orderBy: readonly OrderItem[];
  /** FILTER (WHERE …). */
  readonly filter: Expr | undefined;
  /** OVER (…) or OVER name: present for window function calls. */
  readonly over: WindowSpec | undefined;
}
export interface Subscript { readonly kind: 'Subscript'; readonly span: Span; readonly expr: Expr; readonly index: Expr }
export interface ListLiteral { readonly kind: 'ListLiteral'; readonly span: Span; readonly items: readonly Expr[] }
export interface StructEntry { readonly kind: 'StructEntry'; readonly span: Span; readonly key: string; readonly value: Expr }
export interface StructLiteral { readonly kind: 'StructLiteral'; readonly span: Span; readonly entries: readonly StructEntry[] }
/** A parenthesized list of two or more expressions: `(a, b) IN (…)`. */
export interface Row { readonly kind: 'Row'; readonly span: Span; readonly items: readonly Expr[] }

export type Expr =
  | NumberLiteral | StringLiteral | BooleanLiteral | NullLiteral | TypedLiteral | IntervalLiteral
  | ColumnRef | Unary | Binary | Like | Is | Between | InList | InSubquery | Quantified | Exists
  | ScalarSubquery | Case | Cast | ExtractExpr | FunctionCall | Subscript | ListLiteral | StructLiteral | Row;

// ------------------------------------------------------------------ windows, ordering

export interface OrderItem { readonly kind: 'OrderItem'; readonly span: Span; readonly expr: Expr; readonly direction: 'ASC' | 'DESC' | undefined; readonly nulls: 'FIRST' | 'LAST' | undefined }
export type FrameBound =
  | { readonly kind: 'UnboundedPreceding'; readonly span: Span }
  | { readonly kind: 'Preceding'; readonly span: Span; readonly offset: Expr }
  | { readonly kind: 'CurrentRow'; readonly span: Span }
  | { readonly kind: 'Following'; readonly span: Span; readonly offset: Expr }
  | { readonly kind: 'UnboundedFollowing'; readonly span: Span };
export interface WindowFrame {
  readonly kind: 'WindowFrame';
  readonly span: Span;
  readonly units: 'ROWS' | 'RANGE' | 'GROUPS';
  readonly start: FrameBound;
  /** Absent for the single-bound form (`ROWS 3 PRECEDING`). */
  readonly end: FrameBound | undefined;
  readonly exclude: 'CURRENT ROW' | 'GROUP' | 'TIES' | 'NO OTHERS' | undefined;
}
export interface WindowSpec {
  readonly kind: 'WindowSpec';
  readonly span: Span;
  /** The named window this one refines (`OVER w`, `OVER (w ORDER BY …)`). */
  readonly base: Ident | undefined;
  readonly partitionBy: readonly Expr[];
  readonly orderBy: readonly OrderItem[];
  readonly frame: WindowFrame | undefined;
}
export interface NamedWindow { readonly kind: 'NamedWindow'; readonly span: Span; readonly name: Ident; readonly spec: WindowSpec }

// ------------------------------------------------------------------ data types

export type PrimitiveTypeName =
  | 'boolean' | 'tinyint' | 'smallint' | 'int' | 'bigint' | 'hugeint' | 'float' | 'double'
  | 'date' | 'time' | 'timestamp' | 'timestamptz' | 'string' | 'uuid' | 'binary' | 'json';
export interface PrimitiveType { readonly kind: 'PrimitiveType'; readonly span: Span; readonly name: PrimitiveTypeName }
export interface DecimalType { readonly kind: 'DecimalType'; readonly span: Span; readonly precision: number | undefined; readonly scale: number | undefined }
/** Iceberg fixed(n). */
export interface FixedType { readonly kind: 'FixedType'; readonly span: Span; readonly length: number }
export interface StructField { readonly kind: 'StructField'; readonly span: Span; readonly name: Ident; readonly type: DataType; readonly notNull: boolean; readonly comment: string | undefined }
export interface StructType { readonly kind: 'StructType'; readonly span: Span; readonly fields: readonly StructField[] }
export interface ListType { readonly kind: 'ListType'; readonly span: Span; readonly element: DataType }
export interface MapType { readonly kind: 'MapType'; readonly span: Span; readonly key: DataType; readonly value: DataType }
export type DataType = PrimitiveType | DecimalType | FixedType | StructType | ListType | MapType;

// ------------------------------------------------------------------ relations

/** `AS alias (c1, c2)` on a table reference. */
export interface TableAlias { readonly kind: 'TableAlias'; readonly span: Span; readonly name: Ident; readonly columns: readonly Ident[] }
/** Iceberg time travel on a scan. */
export type TimeTravel =
  | { readonly kind: 'AsOfVersion'; readonly span: Span; /** Snapshot id (number) or ref name (string). */ readonly version: Expr }
  | { readonly kind: 'AsOfTimestamp'; readonly span: Span; readonly timestamp: Expr };

/** A catalog table or view reference. */
export interface Scan { readonly kind: 'Scan'; readonly span: Span; readonly table: QualifiedName; readonly alias: TableAlias | undefined; readonly timeTravel: TimeTravel | undefined }
/** A table function in FROM (`range(10)`, `read_parquet(…)`); the engine decides which it allows. */
export interface TableFunction { readonly kind: 'TableFunction'; readonly span: Span; readonly name: QualifiedName; readonly args: readonly Expr[]; readonly alias: TableAlias | undefined }
/** A reference to a CTE of an enclosing WITH (resolved by name, innermost first). */
export interface CteRef { readonly kind: 'CteRef'; readonly span: Span; readonly name: Ident; readonly alias: TableAlias | undefined }
/** A subquery in FROM (derived table), possibly LATERAL. */
export interface Derived { readonly kind: 'Derived'; readonly span: Span; readonly query: Relation; readonly alias: TableAlias | undefined; readonly lateral: boolean }
export interface Values { readonly kind: 'Values'; readonly span: Span; readonly rows: readonly (readonly Expr[])[] }
/** The one empty row a SELECT without FROM reads. */
export interface OneRow { readonly kind: 'OneRow'; readonly span: Span }
export type JoinType = 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS';
export type JoinCondition =
  | { readonly kind: 'On'; readonly span: Span; readonly expr: Expr }
  | { readonly kind: 'Using'; readonly span: Span; readonly columns: readonly Ident[] };
export interface Join {
  readonly kind: 'Join';
  readonly span: Span;
  readonly joinType: JoinType;
  readonly natural: boolean;
  /** A comma in FROM (`FROM a, b`): an implicit cross join. */
  readonly implicit: boolean;
  readonly left: Relation;
  readonly right: Relation;
  readonly condition: JoinCondition | undefined;
}
/** WHERE, HAVING or QUALIFY. */
export interface Filter { readonly kind: 'Filter'; readonly span: Span; readonly input: Relation; readonly predicate: Expr; readonly clause: 'WHERE' | 'HAVING' | 'QUALIFY' }
export type GroupingElement =
  | Expr
  | { readonly kind: 'Rollup'; readonly span: Span; readonly exprs: readonly Expr[] }
  | { readonly kind: 'Cube'; readonly span: Span; readonly exprs: readonly Expr[] }
  | { readonly kind: 'GroupingSets'; readonly span: Span; readonly sets: readonly (readonly Expr[])[] }
  | { readonly kind: 'EmptyGroupingSet'; readonly span: Span };
export interface Aggregate {
  readonly kind: 'Aggregate';
  readonly span: Span;
  readonly input: Relation;
  /** GROUP BY elements (ordinals stay number literals); empty for a global aggregate. */
  readonly groupBy: readonly GroupingElement[];
  /** The aggregate calls the block computes (from the select list, HAVING, QUALIFY, ORDER BY). */
  readonly aggregates: readonly FunctionCall[];
}
export interface Window {
  readonly kind: 'Window';
  readonly span: Span;
  readonly input: Relation;
  /** The window function calls the block computes. */
  readonly functions: readonly FunctionCall[];
  /** The WINDOW clause. */
  readonly windows: readonly NamedWindow[];
}
export interface SelectExpr { readonly kind: 'SelectExpr'; readonly span: Span; readonly expr: Expr; readonly alias: Ident | undefined }
export interface Star { readonly kind: 'Star'; readonly span: Span; readonly qualifier: readonly Ident[]; readonly exclude: readonly Ident[] }
export type SelectItem = SelectExpr | Star;
export interface Project { readonly kind: 'Project'; readonly span: Span; readonly input: Relation; readonly items: readonly SelectItem[] }
/** SELECT DISTINCT, or DISTINCT ON (exprs). */
export interface Distinct { readonly kind: 'Distinct'; readonly span: Span; readonly input: Relation; readonly on: readonly Expr[] | undefined }
export interface Sort { readonly kind: 'Sort'; readonly span: Span; readonly input: Relation; readonly keys: readonly OrderItem[] }
/** LIMIT / OFFSET / FETCH FIRST. */
export interface Limit { readonly kind: 'Limit'; readonly span: Span; readonly input: Relation; readonly count: Expr | undefined; readonly offset: Expr | undefined }
export interface SetOp { readonly kind: 'SetOp'; readonly span: Span; readonly op: 'UNION' | 'INTERSECT' | 'EXCEPT'; readonly all: boolean; readonly left: Relation; readonly right: Relation }
export interface CteDef { readonly kind: 'CteDef'; readonly span: Span; readonly name: Ident; readonly columns: readonly Ident[]; readonly materialized: boolean | undefined; readonly query: Relation }
export interface With { readonly kind: 'With'; readonly span: Span; readonly recursive: boolean; readonly ctes: readonly CteDef[]; readonly body: Relation }

export type Relation =
  | Scan | TableFunction | CteRef | Derived | Values | OneRow | Join | Filter | Aggregate | Window
  | Project | Distinct | Sort | Limit | SetOp | With;

/** Table references the engine replaces when it unparses (see unparse.ts). */
export type TableRef = Scan | TableFunction;

// ------------------------------------------------------------------ statements: queries and DML

export interface Query { readonly kind: 'Query'; readonly span: Span; readonly body: Relation }
export interface Explain { readonly kind: 'Explain'; readonly span: Span; readonly analyze: boolean; readonly statement: Query | Insert | Update | Delete | Merge }
export interface Insert { readonly kind: 'Insert'; readonly span: Span; readonly table: QualifiedName; readonly columns: readonly Ident[]; /** Undefined for DEFAULT VALUES. */ readonly source: Relation | undefined }
/** `col = DEFAULT` has value undefined. */
export interface Assignment { readonly kind: 'Assignment'; readonly span: Span; readonly column: readonly Ident[]; readonly value: Expr | undefined }
export interface Update { readonly kind: 'Update'; readonly span: Span; readonly table: QualifiedName; readonly alias: Ident | undefined; readonly assignments: readonly Assignment[]; readonly from: Relation | undefined; readonly where: Expr | undefined }
export interface Delete { readonly kind: 'Delete'; readonly span: Span; readonly table: QualifiedName; readonly alias: Ident | undefined; readonly using: Relation | undefined; readonly where: Expr | undefined }
export type MergeAction =
  | { readonly kind: 'MergeUpdate'; readonly span: Span; readonly assignments: readonly Assignment[] }
  | { readonly kind: 'MergeDelete'; readonly span: Span }
  | { readonly kind: 'MergeInsert'; readonly span: Span; readonly columns: readonly Ident[]; /** undefined entries are DEFAULT. */ readonly values: readonly (Expr | undefined)[] }
  | { readonly kind: 'MergeDoNothing'; readonly span: Span };
export interface MergeClause { readonly kind: 'MergeClause'; readonly span: Span; readonly matched: boolean; readonly condition: Expr | undefined; readonly action: MergeAction }
export interface Merge { readonly kind: 'Merge'; readonly span: Span; readonly target: QualifiedName; readonly alias: Ident | undefined; readonly source: Relation; readonly on: Expr; readonly clauses: readonly MergeClause[] }
/** A simple option value (properties, FILE_FORMAT, SET). Words are kept as strings. */
export type OptionValue = string | number | boolean;
export interface OptionEntry { readonly kind: 'OptionEntry'; readonly span: Span; readonly key: string; readonly value: OptionValue }
export type CopySource =
  | { readonly kind: 'Stage'; readonly span: Span; /** Text after "@", e.g. `my_stage/path/`. */ readonly path: string }
  | { readonly kind: 'Location'; readonly span: Span; readonly url: string }
  | StageQuery;
/**
 * `(SELECT <items> FROM @stage[/path] [(FILE_FORMAT => (…), PATTERN => '…')] [alias])`: COPY with
 * transformations. The items are expressions over the file's columns: `$1`, `$2` … (a `ColumnRef`
 * whose last part is the quoted identifier `$1`) or, for files that name their columns, names.
 */
export interface StageQuery {
  readonly kind: 'StageQuery';
  readonly span: Span;
  readonly items: readonly SelectExpr[];
  /** Text after "@". */
  readonly path: string;
  /** FILE_FORMAT => (…); keys upper-case. */
  readonly fileFormat: readonly OptionEntry[] | undefined;
  /** FILE_FORMAT => 'name': a named file format (Floe has none; the executor refuses it with a clear error). */
  readonly namedFormat: string | undefined;
  readonly pattern: string | undefined;
  readonly alias: Ident | undefined;
}
export interface CopyInto {
  readonly kind: 'CopyInto';
  readonly span: Span;
  readonly table: QualifiedName;
  readonly columns: readonly Ident[];
  readonly source: CopySource;
  /** FILE_FORMAT = (TYPE = CSV …); keys upper-case. Undefined when absent. */
  readonly fileFormat: readonly OptionEntry[] | undefined;
  readonly pattern: string | undefined;
  /** FILES = ('a.csv', …): paths relative to the source. Undefined when absent. */
  readonly files: readonly string[] | undefined;
  /** ON_ERROR; undefined means ABORT_STATEMENT. */
  readonly onError: CopyOnError | undefined;
  /** PURGE = TRUE: remove each file that loaded. */
  readonly purge: boolean;
  /** FORCE = TRUE: load files the load history says were loaded already. */
  readonly force: boolean;
  /** VALIDATION_MODE = RETURN_ERRORS: parse and report, load nothing. */
  readonly validationMode: 'RETURN_ERRORS' | undefined;
  /** MATCH_BY_COLUMN_NAME; undefined means NONE (columns by position). */
  readonly matchByColumnName: CopyMatchByColumnName | undefined;
}
export type CopyOnError = 'ABORT_STATEMENT' | 'CONTINUE' | 'SKIP_FILE';
export type CopyMatchByColumnName = 'CASE_SENSITIVE' | 'CASE_INSENSITIVE' | 'NONE';

// ------------------------------------------------------------------ statements: stages

/** CREATE STAGE: a named place for files to load, in the session's catalog. */
export interface CreateStage {
  readonly kind: 'CreateStage'; readonly span: Span; readonly ifNotExists: boolean; readonly name: Ident;
  /** URL = '…': where the files live (inside the catalog's warehouse); undefined for the default folder. */
  readonly url: string | undefined;
  /** FILE_FORMAT = (…): the default format of COPY INTO from this stage; keys upper-case. */
  readonly fileFormat: readonly OptionEntry[] | undefined;
  readonly comment: string | undefined;
}
export interface DropStage { readonly kind: 'DropStage'; readonly span: Span; readonly ifExists: boolean; readonly name: Ident }
export interface ShowStages { readonly kind: 'ShowStages'; readonly span: Span; readonly like: string | undefined }
/** LIST @stage[/path] [PATTERN = '…']. */
export interface ListStage { readonly kind: 'ListStage'; readonly span: Span; /** Text after "@". */ readonly path: string; readonly pattern: string | undefined }
/** REMOVE @stage[/path] [PATTERN = '…']. */
export interface RemoveStage { readonly kind: 'RemoveStage'; readonly span: Span; /** Text after "@". */ readonly path: string; readonly pattern: string | undefined }
export type StageGranteeKind = 'USER' | 'ROLE';
/** GRANT USAGE ON STAGE s TO USER u | ROLE r. */
export interface GrantStage { readonly kind: 'GrantStage'; readonly span: Span; readonly stage: Ident; readonly granteeKind: StageGranteeKind; readonly grantee: Ident }
export interface RevokeStage { readonly kind: 'RevokeStage'; readonly span: Span; readonly stage: Ident; readonly granteeKind: StageGranteeKind; readonly grantee: Ident }

// ------------------------------------------------------------------ statements: DDL

export interface CreateSchema { readonly kind: 'CreateSchema'; readonly span: Span; readonly ifNotExists: boolean; readonly name: QualifiedName; readonly properties: readonly OptionEntry[] }
export interface DropSchema { readonly kind: 'DropSchema'; readonly span: Span; readonly ifExists: boolean; readonly name: QualifiedName; readonly cascade: boolean }
/**
 * A column of CREATE TABLE (or ALTER TABLE ADD COLUMN). `primaryKey`: the column's own `PRIMARY KEY`
 * (it becomes an Iceberg identifier field, and required). `refused`: the constraints it carries that
 * an Iceberg table cannot keep, in source order (the DDL runner refuses the statement).
 */
export interface ColumnDef { readonly kind: 'ColumnDef'; readonly span: Span; readonly name: Ident; readonly type: DataType; readonly notNull: boolean; readonly comment: string | undefined; readonly primaryKey: boolean; readonly refused: readonly RefusedConstraint[] }
/** What a refused constraint is; `foreignKey` is the table form, `references` the column form. */
export type RefusedConstraintKind = 'unique' | 'check' | 'default' | 'references' | 'foreignKey' | 'generated' | 'identity' | 'collate' | 'autoincrement';
/**
 * A constraint valid in SQL that an Iceberg table cannot keep (UNIQUE, CHECK, DEFAULT, REFERENCES,
 * FOREIGN KEY, generated and identity columns, COLLATE, AUTOINCREMENT). It is parsed so that pasted
 * SQL is not a syntax error, and refused with 0A000 by the DDL runner. `sql` is its text as written
 * (with its `CONSTRAINT name`), which is all `toSql` needs to print it back.
 */
export interface RefusedConstraint { readonly kind: 'RefusedConstraint'; readonly span: Span; readonly constraint: RefusedConstraintKind; readonly sql: string }
export type PartitionTransform = 'identity' | 'bucket' | 'truncate' | 'year' | 'month' | 'day' | 'hour' | 'void';
/** A partition field: `c`, `bucket(16, c)`, `truncate(10, c)`, `day(c)`, … */
export interface PartitionField { readonly kind: 'PartitionField'; readonly span: Span; readonly transform: PartitionTransform; readonly column: Ident; readonly parameter: number | undefined }
/** Table options shared by CREATE TABLE and CREATE TABLE AS. */
export interface TableOptions {
  readonly partitionBy: readonly PartitionField[];
  readonly properties: readonly OptionEntry[];
  readonly comment: string | undefined;
  readonly location: string | undefined;
  /** `USING iceberg` (lower-case), when given. */
  readonly using: string | undefined;
}
/**
 * CREATE TABLE with columns. `primaryKey`: the table constraint `PRIMARY KEY (a, b)` (undefined
 * when absent; a column's own PRIMARY KEY is on its ColumnDef). `refused`: table constraints an
 * Iceberg table cannot keep. Constraint names (`CONSTRAINT pk …`) of kept constraints are dropped:
 * Iceberg has nowhere to store them.
 */
export interface CreateTable extends TableOptions { readonly kind: 'CreateTable'; readonly span: Span; readonly orReplace: boolean; readonly ifNotExists: boolean; readonly name: QualifiedName; readonly columns: readonly ColumnDef[]; readonly primaryKey: readonly Ident[] | undefined; readonly refused: readonly RefusedConstraint[] }
export interface CreateTableAs extends TableOptions { readonly kind: 'CreateTableAs'; readonly span: Span; readonly orReplace: boolean; readonly ifNotExists: boolean; readonly name: QualifiedName; readonly columnNames: readonly Ident[]; readonly query: Relation }
export interface DropTable { readonly kind: 'DropTable'; readonly span: Span; readonly ifExists: boolean; readonly name: QualifiedName; readonly purge: boolean }
export type AlterTableAction =
  | { readonly kind: 'AddColumn'; readonly span: Span; readonly ifNotExists: boolean; readonly path: readonly Ident[]; readonly type: DataType; readonly notNull: boolean; readonly comment: string | undefined; readonly primaryKey: boolean; readonly refused: readonly RefusedConstraint[] }
  | { readonly kind: 'DropColumn'; readonly span: Span; readonly ifExists: boolean; readonly path: readonly Ident[] }
  | { readonly kind: 'RenameColumn'; readonly span: Span; readonly path: readonly Ident[]; readonly newName: Ident }
  | { readonly kind: 'AlterColumnType'; readonly span: Span; readonly path: readonly Ident[]; readonly type: DataType }
  | { readonly kind: 'DropNotNull'; readonly span: Span; readonly path: readonly Ident[] }
  | { readonly kind: 'RenameTable'; readonly span: Span; readonly newName: QualifiedName }
  | { readonly kind: 'SetProperties'; readonly span: Span; readonly properties: readonly OptionEntry[] }
  | { readonly kind: 'UnsetProperties'; readonly span: Span; readonly ifExists: boolean; readonly keys: readonly string[] };
export interface AlterTable { readonly kind: 'AlterTable'; readonly span: Span; readonly ifExists: boolean; readonly name: QualifiedName; readonly action: AlterTableAction }
export interface CreateView { readonly kind: 'CreateView'; readonly span: Span; readonly orReplace: boolean; readonly ifNotExists: boolean; readonly name: QualifiedName; readonly columnNames: readonly Ident[]; readonly comment: string | undefined; readonly query: Relation }
export interface DropView { readonly kind: 'DropView'; readonly span: Span; readonly ifExists: boolean; readonly name: QualifiedName }
/**
 * CREATE INDEX, parsed only to be refused (0A000): Iceberg tables have no indexes. `definition` is
 * the text after the table name as written (`USING …`, the keys, `INCLUDE`, `WITH`, `WHERE`).
 */
export interface CreateIndex { readonly kind: 'CreateIndex'; readonly span: Span; readonly unique: boolean; readonly concurrently: boolean; readonly ifNotExists: boolean; readonly name: Ident | undefined; readonly table: QualifiedName; readonly definition: string }
/** DROP INDEX, parsed only to be refused (0A000), like CREATE INDEX. */
export interface DropIndex { readonly kind: 'DropIndex'; readonly span: Span; readonly concurrently: boolean; readonly ifExists: boolean; readonly name: QualifiedName; readonly cascade: boolean | undefined }
export interface ShowCatalogs { readonly kind: 'ShowCatalogs'; readonly span: Span; readonly like: string | undefined }
export interface ShowSchemas { readonly kind: 'ShowSchemas'; readonly span: Span; readonly in: QualifiedName | undefined; readonly like: string | undefined }
export interface ShowTables { readonly kind: 'ShowTables'; readonly span: Span; readonly in: QualifiedName | undefined; readonly like: string | undefined }
export interface ShowViews { readonly kind: 'ShowViews'; readonly span: Span; readonly in: QualifiedName | undefined; readonly like: string | undefined }
export interface DescribeTable { readonly kind: 'DescribeTable'; readonly span: Span; readonly name: QualifiedName }
export interface Use { readonly kind: 'Use'; readonly span: Span; readonly name: QualifiedName }

// ------------------------------------------------------------------ statements: principals

/** Options of CREATE USER / ALTER USER … SET. Secrets (password) are kept: the engine hashes them. */
export interface UserOptions {
  readonly email?: string;
  readonly password?: string;
  readonly displayName?: string;
  readonly defaultRole?: string;
  readonly defaultWarehouse?: string;
  readonly mustChangePassword?: boolean;
  readonly comment?: string;
  /** CREATE USER only; 'NATIVE' is the value shown. */
  readonly identitySource?: string;
}
/** Column names ALTER USER … UNSET accepts (lower-case). */
export type UserField = 'email' | 'password' | 'display_name' | 'default_role' | 'default_warehouse' | 'must_change_password' | 'comment';
export type PrincipalStatus = 'ACTIVE' | 'INVITED' | 'SUSPENDED' | 'DEACTIVATED' | 'PROVISIONED' | 'LOCKED';
export type KeyAlgorithm = 'RS256' | 'RS512' | 'ES256' | 'ES384';
export type ManagePrivilege = 'USERS' | 'PATS' | 'SERVICE ACCOUNTS';

export interface CreateUser { readonly kind: 'CreateUser'; readonly span: Span; readonly ifNotExists: boolean; readonly name: Ident; readonly options: UserOptions & { readonly email: string } }
export interface AlterUserSet { readonly kind: 'AlterUserSet'; readonly span: Span; readonly name: Ident; readonly options: UserOptions }
export interface AlterUserUnset { readonly kind: 'AlterUserUnset'; readonly span: Span; readonly name: Ident; readonly fields: readonly UserField[] }
export interface AlterUserSuspend { readonly kind: 'AlterUserSuspend'; readonly span: Span; readonly name: Ident }
export interface AlterUserUnsuspend { readonly kind: 'AlterUserUnsuspend'; readonly span: Span; readonly name: Ident }
export interface AlterUserUnlock { readonly kind: 'AlterUserUnlock'; readonly span: Span; readonly name: Ident }
export interface AlterUserRename { readonly kind: 'AlterUserRename'; readonly span: Span; readonly name: Ident; readonly newName: Ident }
export interface AlterUserSetLegalHold { readonly kind: 'AlterUserSetLegalHold'; readonly span: Span; readonly name: Ident; readonly reason: string }
export interface AlterUserClearLegalHold { readonly kind: 'AlterUserClearLegalHold'; readonly span: Span; readonly name: Ident }
/** ALTER USER SELF SET PASSWORD '…' OLD PASSWORD '…'. */
export interface AlterSelfPassword { readonly kind: 'AlterSelfPassword'; readonly span: Span; readonly newPassword: string; readonly oldPassword: string }
export interface AlterSelfEnrollMfa { readonly kind: 'AlterSelfEnrollMfa'; readonly span: Span; readonly method: 'TOTP' }
export interface AlterSelfVerifyMfa { readonly kind: 'AlterSelfVerifyMfa'; readonly span: Span; readonly method: 'TOTP'; readonly code: string }
export interface AlterSelfDisableMfa { readonly kind: 'AlterSelfDisableMfa'; readonly span: Span; readonly method: 'TOTP'; readonly code: string }
export interface DropUser { readonly kind: 'DropUser'; readonly span: Span; readonly ifExists: boolean; readonly name: Ident; /** RESTRICT (the default) is false. */ readonly cascade: boolean }
export interface UndropUser { readonly kind: 'UndropUser'; readonly span: Span; readonly name: Ident }
export interface ExpungeUser { readonly kind: 'ExpungeUser'; readonly span: Span; readonly name: Ident; readonly reason: string }
export interface ShowUsers { readonly kind: 'ShowUsers'; readonly span: Span; readonly like: string | undefined; readonly status: PrincipalStatus | undefined }
export interface DescribeUser { readonly kind: 'DescribeUser'; readonly span: Span; readonly name: Ident }
export interface RedeemInvitation { readonly kind: 'RedeemInvitation'; readonly span: Span; readonly token: string; readonly password: string }
export interface CreateServiceAccount { readonly kind: 'CreateServiceAccount'; readonly span: Span; readonly ifNotExists: boolean; readonly name: Ident; readonly defaultRole: string | undefined; readonly comment: string | undefined }
export interface DropServiceAccount { readonly kind: 'DropServiceAccount'; readonly span: Span; readonly ifExists: boolean; readonly name: Ident }
export interface AddKeypair { readonly kind: 'AddKeypair'; readonly span: Span; readonly account: Ident; readonly keyId: string; /** PEM text. Not a secret. */ readonly publicKey: string; readonly algorithm: KeyAlgorithm | undefined }
export interface DropKeypair { readonly kind: 'DropKeypair'; readonly span: Span; readonly account: Ident; readonly ifExists: boolean; readonly keyId: string }
export interface ShowServiceAccounts { readonly kind: 'ShowServiceAccounts'; readonly span: Span }
export interface CreatePat { readonly kind: 'CreatePat'; readonly span: Span; readonly name: Ident; readonly forUser: Ident | undefined; /** As written, e.g. '30 days'. */ readonly ttl: string | undefined; readonly scope: string | undefined }
export interface DropPat { readonly kind: 'DropPat'; readonly span: Span; readonly ifExists: boolean; readonly name: Ident; readonly forUser: Ident | undefined }
export interface ShowPats { readonly kind: 'ShowPats'; readonly span: Span; readonly forUser: Ident | undefined }
export interface CreateWebhook { readonly kind: 'CreateWebhook'; readonly span: Span; readonly ifNotExists: boolean; readonly name: Ident; readonly url: string; readonly secret: string; readonly events: readonly string[] | undefined }
export interface DropWebhook { readonly kind: 'DropWebhook'; readonly span: Span; readonly ifExists: boolean; readonly name: Ident }
export interface ShowWebhooks { readonly kind: 'ShowWebhooks'; readonly span: Span }
export interface GrantManage { readonly kind: 'GrantManage'; readonly span: Span; readonly privileges: readonly ManagePrivilege[]; readonly user: Ident }
export interface RevokeManage { readonly kind: 'RevokeManage'; readonly span: Span; readonly privileges: readonly ManagePrivilege[]; readonly user: Ident }
export interface CreateRole { readonly kind: 'CreateRole'; readonly span: Span; readonly ifNotExists: boolean; readonly name: Ident }
export interface DropRole { readonly kind: 'DropRole'; readonly span: Span; readonly ifExists: boolean; readonly name: Ident }
export interface GrantRole { readonly kind: 'GrantRole'; readonly span: Span; readonly role: Ident; readonly user: Ident }
export interface RevokeRole { readonly kind: 'RevokeRole'; readonly span: Span; readonly role: Ident; readonly user: Ident }

// ------------------------------------------------------------------ statements: workload and session

export type WorkloadClass = 'interactive' | 'medium' | 'batch';
/** SET svc.workload_class = '…'. */
export interface SetWorkloadClass { readonly kind: 'SetWorkloadClass'; readonly span: Span; readonly workloadClass: WorkloadClass }
/** SET name = value; `value` undefined for DEFAULT. `name` is dotted and lower-case. */
export interface SetSession { readonly kind: 'SetSession'; readonly span: Span; readonly name: string; readonly value: OptionValue | undefined }
/** RESET name, or RESET ALL (`name` undefined). */
export interface ResetSession { readonly kind: 'ResetSession'; readonly span: Span; readonly name: string | undefined }
export interface ShowQueryHistory { readonly kind: 'ShowQueryHistory'; readonly span: Span; /** Undefined means the default (50). */ readonly limit: number | undefined }
export interface ShowResourceGroups { readonly kind: 'ShowResourceGroups'; readonly span: Span }

export type Statement =
  | Query | Explain | Insert | Update | Delete | Merge | CopyInto
  | CreateSchema | DropSchema | CreateTable | CreateTableAs | DropTable | AlterTable | CreateView | DropView | CreateIndex | DropIndex
  | ShowCatalogs | ShowSchemas | ShowTables | ShowViews | DescribeTable | Use
  | CreateUser | AlterUserSet | AlterUserUnset | AlterUserSuspend | AlterUserUnsuspend | AlterUserUnlock
  | AlterUserRename | AlterUserSetLegalHold | AlterUserClearLegalHold
  | AlterSelfPassword | AlterSelfEnrollMfa | AlterSelfVerifyMfa | AlterSelfDisableMfa
  | DropUser | UndropUser | ExpungeUser | ShowUsers | DescribeUser | RedeemInvitation
  | CreateServiceAccount | DropServiceAccount | AddKeypair | DropKeypair | ShowServiceAccounts
  | CreatePat | DropPat | ShowPats | CreateWebhook | DropWebhook | ShowWebhooks
  | GrantManage | RevokeManage | CreateRole | DropRole | GrantRole | RevokeRole
  | SetWorkloadClass | SetSession | ResetSession | ShowQueryHistory | ShowResourceGroups
  | CreateStage | DropStage | ShowStages | ListStage | RemoveStage | GrantStage | RevokeStage;

export type StatementKind = Statement['kind'];

/** Every node type of the IR. */
export type Node =
  | Statement | Relation | Expr | Ident | QualifiedName | DataType | StructField | CaseWhen | StructEntry
  | OrderItem | WindowSpec | WindowFrame | FrameBound | NamedWindow | TableAlias | TimeTravel | JoinCondition
  | Exclude<GroupingElement, Expr> | SelectItem | CteDef | Assignment | MergeClause | MergeAction | OptionEntry
  | CopySource | ColumnDef | RefusedConstraint | PartitionField | AlterTableAction;

export type NodeKind = Node['kind'];
export type NodeOf<K extends NodeKind> = Extract<Node, { readonly kind: K }>;

/** The one factory: `make('Scan', span, {table, alias, timeTravel})`. */
export function make<K extends NodeKind>(kind: K, span: Span, fields: Omit<NodeOf<K>, 'kind' | 'span'>): NodeOf<K> {
  return { kind, span, ...fields } as unknown as NodeOf<K>;
}

/** Span covering `a` to `b`. */
export function spanOf(a: { readonly span: Span }, b: { readonly span: Span }): Span {
  return { start: a.span.start, end: b.span.end };
}

export function ident(name: string, span: Span, quoted = false): Ident {
  return { kind: 'Ident', span, name, quoted };
}

export function qualifiedName(parts: readonly Ident[], span: Span): QualifiedName {
  return { kind: 'QualifiedName', span, parts };
}

/** For exhaustive switches: a case that the type checker proves cannot happen. */
export function unreachable(x: never): never {
  throw new Error(`unreachable: ${JSON.stringify((x as { kind?: unknown })?.kind ?? x)}`);
}

/** Whether a node is an expression (as opposed to other node kinds that can share a list). */
const EXPR_KINDS: ReadonlySet<string> = new Set<Expr['kind']>([
  'NumberLiteral', 'StringLiteral', 'BooleanLiteral', 'NullLiteral', 'TypedLiteral', 'IntervalLiteral',
  'ColumnRef', 'Unary', 'Binary', 'Like', 'Is', 'Between', 'InList', 'InSubquery', 'Quantified', 'Exists',
  'ScalarSubquery', 'Case', 'Cast', 'Extract', 'FunctionCall', 'Subscript', 'ListLiteral', 'StructLiteral', 'Row',
]);
export function isExpr(n: { readonly kind: string }): n is Expr {
  return EXPR_KINDS.has(n.kind);
}

/** A deep copy of any IR value without spans: for comparing trees regardless of source positions. */
export function withoutSpans<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => withoutSpans(v)) as unknown as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'span' && v !== undefined) out[k] = withoutSpans(v);
    return out as T;
  }
  return value;
}

-- Stages and bulk loading: CREATE/DROP/SHOW STAGES, LIST, REMOVE, stage grants, COPY INTO options.
CREATE STAGE raw
----
CREATE STAGE IF NOT EXISTS raw URL = 'file:///data/warehouse/stages/raw/' FILE_FORMAT = (TYPE = CSV, SKIP_HEADER = 1) COMMENT = 'landing'
----
create stage s url='file:///w/x/' file_format=(type=parquet)
----
CREATE STAGE s FILE_FORMAT (TYPE JSON) COMMENT 'json files'
----
DROP STAGE raw
----
DROP STAGE IF EXISTS raw
----
SHOW STAGES
----
SHOW STAGES LIKE 'r%'
----
LIST @raw
----
LIST @raw/2024/06/ PATTERN = '.*[.]csv'
----
LS @~
----
ls @~/uploads/ pattern '.*'
----
REMOVE @raw/2024/06/a.csv
----
RM @raw PATTERN = '.*[.]gz'
----
REMOVE @~/tmp/
----
GRANT USAGE ON STAGE raw TO USER alice
----
GRANT USAGE ON STAGE raw TO ROLE loaders
----
REVOKE USAGE ON STAGE raw FROM USER alice
----
REVOKE USAGE ON STAGE raw FROM ROLE loaders
----
COPY INTO orders FROM @raw FILES = ('a.csv', 'b/c.csv.gz') ON_ERROR = CONTINUE
----
COPY INTO orders (id, amount) FROM @raw/2024/ FILE_FORMAT = (TYPE = CSV) PATTERN = '.*csv' ON_ERROR = SKIP_FILE PURGE = TRUE FORCE = TRUE
----
COPY INTO orders FROM @~/x.parquet FILE_FORMAT = (TYPE = PARQUET) MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE
----
copy into orders from @raw validation_mode = return_errors on_error = abort_statement purge = false
----
COPY INTO orders FROM @raw MATCH_BY_COLUMN_NAME CASE_SENSITIVE FORCE FALSE
----
COPY INTO orders (id, name, total) FROM (SELECT $1::bigint, upper($2), $3::int * $4::decimal(10,2) FROM @raw/2024/) ON_ERROR = CONTINUE
----
COPY INTO orders FROM (SELECT f.$2, f.$1, METADATA$FILENAME FROM @raw (FILE_FORMAT => (TYPE = CSV, SKIP_HEADER = 1), PATTERN => '.*[.]csv') f) PURGE = TRUE
----
COPY INTO orders (sku, price) FROM (SELECT sku AS s, price * 2 FROM @~/p/ AS src) FILE_FORMAT = (TYPE = PARQUET)
----
copy into orders from (select $1 from @raw (file_format => 'named_format'))

-- Invalid statements: Principal management. String literals are never echoed in messages (they may be secrets).
-- Each statement follows a header "-- error <line>:<column> expected: <text>" (see docs/grammar.md).
-- error 1:1 expected: an EMAIL clause
CREATE USER alice
----
-- error 1:41 expected: another clause
CREATE USER alice EMAIL 'a@example.com' EMAIL 'b@example.com'
----
-- error 1:24 expected: a string literal
CREATE USER alice EMAIL
----
-- error 1:26 expected: a string literal
CREATE USER alice EMAIL =
----
-- error 1:66 expected: another clause
CREATE USER alice EMAIL 'a@example.com' PASSWORD 'hunter2-first' PASSWORD 'hunter2-second'
----
-- error 1:62 expected: TRUE or FALSE
CREATE USER alice EMAIL 'a@example.com' MUST_CHANGE_PASSWORD 'yes'
----
-- error 1:41 expected: the end of the statement
CREATE USER alice EMAIL 'a@example.com' FAVOURITE_COLOUR 'blue'
----
-- error 1:20 expected: EXISTS
CREATE USER IF NOT alice EMAIL 'a@example.com'
----
-- error 1:1 expected: an EMAIL clause
CREATE USER alice PASSWORD 'hunter2-only' 
----
-- error 1:17 expected: CLEAR, SET, UNSET, SUSPEND, UNSUSPEND, UNLOCK or RENAME
ALTER USER alice
----
-- error 1:21 expected: LEGAL, EMAIL, PASSWORD, DISPLAY_NAME, DEFAULT_ROLE, DEFAULT_WAREHOUSE, MUST_CHANGE_PASSWORD, COMMENT or IDENTITY_SOURCE
ALTER USER alice SET
----
-- error 1:22 expected: an alterable user property
ALTER USER alice SET IDENTITY_SOURCE 'NATIVE'
----
-- error 1:23 expected: EMAIL, PASSWORD, DISPLAY_NAME, DEFAULT_ROLE, DEFAULT_WAREHOUSE, MUST_CHANGE_PASSWORD or COMMENT
ALTER USER alice UNSET
----
-- error 1:18 expected: distinct column names
ALTER USER alice UNSET email, email
----
-- error 1:24 expected: EMAIL, PASSWORD, DISPLAY_NAME, DEFAULT_ROLE, DEFAULT_WAREHOUSE, MUST_CHANGE_PASSWORD or COMMENT
ALTER USER alice UNSET identity_source
----
-- error 1:25 expected: TO
ALTER USER alice RENAME bob
----
-- error 1:32 expected: REASON
ALTER USER alice SET LEGAL HOLD
----
-- error 1:39 expected: a string literal
ALTER USER alice SET LEGAL HOLD REASON
----
-- error 1:24 expected: LEGAL
ALTER USER alice CLEAR HOLD
----
-- error 1:46 expected: OLD
ALTER USER SELF SET PASSWORD 'new-Passw0rd-1'
----
-- error 1:51 expected: PASSWORD
ALTER USER SELF SET PASSWORD 'new-Passw0rd-1' OLD 'old-Passw0rd-1'
----
-- error 1:27 expected: TOTP
ALTER USER SELF ENROLL MFA
----
-- error 1:28 expected: TOTP
ALTER USER SELF ENROLL MFA SMS
----
-- error 1:32 expected: a string literal
ALTER USER SELF VERIFY MFA TOTP
----
-- error 1:33 expected: a string literal
ALTER USER SELF VERIFY MFA TOTP 123456
----
-- error 1:29 expected: WITH
ALTER USER SELF DISABLE MFA TOTP CODE '123456'
----
-- error 1:17 expected: SET, ENROLL, VERIFY or DISABLE
ALTER USER SELF SUSPEND
----
-- error 1:25 expected: the end of the statement
DROP USER alice CASCADE RESTRICT
----
-- error 1:14 expected: the end of the statement
DROP USER IF alice
----
-- error 1:8 expected: USER
UNDROP alice
----
-- error 1:19 expected: REASON
EXPUNGE USER alice
----
-- error 1:26 expected: a string literal
EXPUNGE USER alice REASON
----
-- error 1:27 expected: ACTIVE, INVITED, SUSPENDED, DEACTIVATED, PROVISIONED or LOCKED
SHOW USERS WHERE STATUS = 'HAPPY'
----
-- error 1:18 expected: STATUS
SHOW USERS WHERE NAME = 'x'
----
-- error 1:16 expected: a string literal
SHOW USERS LIKE
----
-- error 1:14 expected: an identifier
DESCRIBE USER
----
-- error 1:34 expected: WITH
REDEEM INVITATION 'inv_token_abc'
----
-- error 1:19 expected: a string literal
REDEEM INVITATION WITH PASSWORD 'Fresh-Passw0rd-1'
----
-- error 1:8 expected: INVITATION
REDEEM 'inv_token_abc' WITH PASSWORD 'Fresh-Passw0rd-1'
----
-- error 1:16 expected: ACCOUNT
CREATE SERVICE etl
----
-- error 1:28 expected: the end of the statement
CREATE SERVICE ACCOUNT etl PASSWORD 'not-for-service-accounts'
----
-- error 1:40 expected: another clause
CREATE SERVICE ACCOUNT etl COMMENT 'a' COMMENT 'b'
----
-- error 1:1 expected: a PUBLIC_KEY clause
ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'k1'
----
-- error 1:1 expected: a KEY_ID clause
ALTER SERVICE ACCOUNT etl ADD KEYPAIR PUBLIC_KEY '-----BEGIN PUBLIC KEY-----
MIIB
-----END PUBLIC KEY-----'
----
-- error 1:78 expected: RS256, RS512, ES256 or ES384
ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'k1' PUBLIC_KEY 'pem' ALGORITHM HS256
----
-- error 1:40 expected: KEY_ID
ALTER SERVICE ACCOUNT etl DROP KEYPAIR 'k1'
----
-- error 1:38 expected: KEY_ID, PUBLIC_KEY or ALGORITHM
ALTER SERVICE ACCOUNT etl ADD KEYPAIR
----
-- error 1:29 expected: an identifier
CREATE PERSONAL ACCESS TOKEN
----
-- error 1:36 expected: a string literal
CREATE PERSONAL ACCESS TOKEN t TTL 30
----
-- error 1:17 expected: ACCESS
CREATE PERSONAL TOKEN t
----
-- error 1:45 expected: another clause
CREATE PERSONAL ACCESS TOKEN t TTL '1 days' TTL '2 days'
----
-- error 1:37 expected: an identifier
DROP PERSONAL ACCESS TOKEN IF EXISTS
----
-- error 1:32 expected: an identifier
SHOW PERSONAL ACCESS TOKENS FOR
----
-- error 1:1 expected: a SECRET clause
CREATE WEBHOOK w URL 'https://hooks.example.com/x'
----
-- error 1:1 expected: a URL clause
CREATE WEBHOOK w SECRET 'whsec-0123456789abcdef'
----
-- error 1:92 expected: a string literal
CREATE WEBHOOK w URL 'https://hooks.example.com/x' SECRET 'whsec-0123456789abcdef' EVENTS ()
----
-- error 1:96 expected: a string literal
CREATE WEBHOOK w URL 'https://hooks.example.com/x' SECRET 'whsec-0123456789abcdef' EVENTS ('a',)
----
-- error 1:91 expected: "("
CREATE WEBHOOK w URL 'https://hooks.example.com/x' SECRET 'whsec-0123456789abcdef' EVENTS 'create_user'
----
-- error 1:13 expected: an identifier
DROP WEBHOOK
----
-- error 1:14 expected: USERS, PATS or SERVICE
GRANT MANAGE TO USER alice
----
-- error 1:23 expected: USER
GRANT MANAGE USERS TO alice
----
-- error 1:14 expected: USERS, PATS or SERVICE
GRANT MANAGE ROLES TO USER alice
----
-- error 1:21 expected: FROM
REVOKE MANAGE USERS TO USER alice
----
-- error 1:23 expected: USER
GRANT ROLE analyst TO alice
----
-- error 1:12 expected: an identifier
GRANT ROLE TO USER alice
----
-- error 1:25 expected: USER
REVOKE ROLE analyst FROM
----
-- error 1:12 expected: an identifier
CREATE ROLE
----
-- error 1:20 expected: an identifier
DROP ROLE IF EXISTS
----
-- A password in double quotes is a quoted identifier: refused, and never echoed.
-- error 1:50 expected: a string literal
CREATE USER alice EMAIL 'a@example.com' PASSWORD "hunter2-dq"
----
-- error 1:52 expected: a string literal
CREATE USER alice EMAIL 'a@example.com' PASSWORD = hunter2bare

-- Principal management: every statement shape of the service spec's SQL tables. Every clause
-- appears as KEY VALUE, KEY = VALUE and KEY=VALUE.
CREATE USER alice EMAIL 'alice@example.com' PASSWORD 'Correct-Horse-9' DISPLAY_NAME 'Alice A.' DEFAULT_ROLE analyst DEFAULT_WAREHOUSE wh_small MUST_CHANGE_PASSWORD TRUE COMMENT 'first user' IDENTITY_SOURCE 'NATIVE'
----
CREATE USER bob EMAIL = 'bob@example.com' PASSWORD = 'Tr0ub4dor&3x' DISPLAY_NAME = 'Bob B.' DEFAULT_ROLE = 'analyst' DEFAULT_WAREHOUSE = 'wh_large' MUST_CHANGE_PASSWORD = FALSE COMMENT = 'second user' IDENTITY_SOURCE = NATIVE
----
CREATE USER carol EMAIL='carol@example.com' PASSWORD='s3cr3t-Passw0rd!' DISPLAY_NAME='Carol C.' DEFAULT_ROLE=engineer DEFAULT_WAREHOUSE=wh_small MUST_CHANGE_PASSWORD=TRUE COMMENT='third user' IDENTITY_SOURCE='NATIVE'
----
CREATE USER IF NOT EXISTS dave EMAIL 'dave@example.com'
----
CREATE USER erin EMAIL = 'erin@example.com'
----
CREATE USER frank EMAIL='frank@example.com'
----
CREATE USER "Grace.Hopper" EMAIL 'grace@example.com' PASSWORD 'It''s-a-Quote-1'
----
CREATE USER IF NOT EXISTS heidi
  EMAIL = 'heidi@example.com'
  DISPLAY_NAME = 'Heidi'
  MUST_CHANGE_PASSWORD = TRUE;
----
create user ivan email 'ivan@example.com' password 'lower-Case-kw-1' must_change_password false
----
CREATE USER judy COMMENT 'email last' EMAIL 'judy@example.com'
----
ALTER USER alice SET PASSWORD 'N3w-Password-1'
----
ALTER USER alice SET PASSWORD = 'N3w-Password-2'
----
ALTER USER alice SET PASSWORD='N3w-Password-3'
----
ALTER USER alice SET EMAIL 'a@example.org' DISPLAY_NAME 'A' DEFAULT_ROLE reader DEFAULT_WAREHOUSE wh MUST_CHANGE_PASSWORD TRUE COMMENT 'c'
----
ALTER USER alice SET EMAIL = 'a@example.org' DISPLAY_NAME = 'A' DEFAULT_ROLE = 'reader' DEFAULT_WAREHOUSE = 'wh' MUST_CHANGE_PASSWORD = FALSE COMMENT = 'c'
----
ALTER USER alice SET EMAIL='a@example.org' DISPLAY_NAME='A' DEFAULT_ROLE=reader DEFAULT_WAREHOUSE=wh MUST_CHANGE_PASSWORD=TRUE COMMENT='c'
----
ALTER USER "Grace.Hopper" SET DISPLAY_NAME = 'Rear Admiral Hopper'
----
ALTER USER alice UNSET DISPLAY_NAME
----
ALTER USER alice UNSET DISPLAY_NAME, DEFAULT_ROLE, DEFAULT_WAREHOUSE, COMMENT
----
ALTER USER alice UNSET email, password, must_change_password
----
ALTER USER alice SUSPEND
----
ALTER USER alice UNSUSPEND
----
ALTER USER alice UNLOCK
----
ALTER USER alice RENAME TO alice2
----
ALTER USER alice RENAME TO "Alice Smith"
----
ALTER USER alice SET LEGAL HOLD REASON 'litigation 2024-17'
----
ALTER USER alice SET LEGAL HOLD REASON = 'litigation 2024-18'
----
ALTER USER alice SET LEGAL HOLD REASON='litigation 2024-19'
----
ALTER USER alice CLEAR LEGAL HOLD
----
ALTER USER SELF SET PASSWORD 'new-Passw0rd-1' OLD PASSWORD 'old-Passw0rd-1'
----
ALTER USER SELF SET PASSWORD = 'new-Passw0rd-2' OLD PASSWORD = 'old-Passw0rd-2'
----
ALTER USER SELF SET PASSWORD='new-Passw0rd-3' OLD PASSWORD='old-Passw0rd-3'
----
alter user self set password 'x-Lower-1' old password 'y-Lower-1';
----
ALTER USER SELF ENROLL MFA TOTP
----
ALTER USER SELF VERIFY MFA TOTP '123456'
----
ALTER USER SELF VERIFY MFA TOTP = '234567'
----
ALTER USER SELF VERIFY MFA TOTP='345678'
----
ALTER USER SELF DISABLE MFA WITH TOTP CODE '456789'
----
ALTER USER SELF DISABLE MFA WITH TOTP CODE = '567890'
----
ALTER USER SELF DISABLE MFA WITH TOTP CODE='678901'
----
DROP USER alice
----
DROP USER IF EXISTS alice
----
DROP USER alice CASCADE
----
DROP USER alice RESTRICT
----
DROP USER IF EXISTS "Grace.Hopper" CASCADE
----
UNDROP USER alice
----
EXPUNGE USER alice REASON 'GDPR erasure request 17'
----
EXPUNGE USER alice REASON = 'GDPR erasure request 18'
----
EXPUNGE USER alice REASON='GDPR erasure request 19'
----
SHOW USERS
----
SHOW USERS LIKE 'a%'
----
SHOW USERS LIKE = 'a%'
----
SHOW USERS LIKE='b%' WHERE STATUS='ACTIVE'
----
SHOW USERS WHERE STATUS = 'ACTIVE'
----
SHOW USERS WHERE STATUS 'SUSPENDED'
----
SHOW USERS WHERE STATUS='INVITED'
----
SHOW USERS LIKE '%@example.com' WHERE STATUS = 'DEACTIVATED'
----
SHOW USERS WHERE STATUS = provisioned
----
DESCRIBE USER alice
----
DESC USER "Grace.Hopper"
----
REDEEM INVITATION 'inv_7f3a9c2e5b1d' WITH PASSWORD 'Fresh-Passw0rd-1'
----
REDEEM INVITATION = 'inv_8f3a9c2e5b1d' WITH PASSWORD = 'Fresh-Passw0rd-2'
----
REDEEM INVITATION='inv_9f3a9c2e5b1d' WITH PASSWORD='Fresh-Passw0rd-3'
----
CREATE SERVICE ACCOUNT etl
----
CREATE SERVICE ACCOUNT IF NOT EXISTS etl DEFAULT_ROLE loader COMMENT 'nightly loads'
----
CREATE SERVICE ACCOUNT etl2 DEFAULT_ROLE = loader COMMENT = 'nightly loads'
----
CREATE SERVICE ACCOUNT etl3 DEFAULT_ROLE='loader' COMMENT='nightly loads'
----
DROP SERVICE ACCOUNT etl
----
DROP SERVICE ACCOUNT IF EXISTS etl
----
ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'key-1' PUBLIC_KEY '-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo
4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u
+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyeh
kd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ
0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdg
cKWTjpBP2dPwVZ4WWC+9aGVd+Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbc
mwIDAQAB
-----END PUBLIC KEY-----' ALGORITHM RS256
----
ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID = 'key-2' PUBLIC_KEY = '-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEVs/o5+uQbTjL3chynL4wXgUg2R9
q9UU8I5mEovUf86QZ7kOBIjJwqnzD1omageEHWwHdBO6B+dFabmdT9POxg==
-----END PUBLIC KEY-----' ALGORITHM = ES256
----
ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID='key-3' PUBLIC_KEY='-----BEGIN PUBLIC KEY-----
MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE
-----END PUBLIC KEY-----' ALGORITHM=ES384
----
ALTER SERVICE ACCOUNT etl ADD KEYPAIR PUBLIC_KEY '-----BEGIN PUBLIC KEY-----
MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEA
-----END PUBLIC KEY-----' KEY_ID 'key-4' ALGORITHM 'RS512'
----
ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'key-5' PUBLIC_KEY '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----'
----
ALTER SERVICE ACCOUNT etl DROP KEYPAIR KEY_ID 'key-1'
----
ALTER SERVICE ACCOUNT etl DROP KEYPAIR IF EXISTS KEY_ID = 'key-2'
----
ALTER SERVICE ACCOUNT etl DROP KEYPAIR IF EXISTS KEY_ID='key-3'
----
SHOW SERVICE ACCOUNTS
----
CREATE PERSONAL ACCESS TOKEN laptop
----
CREATE PERSONAL ACCESS TOKEN ci_token FOR alice TTL '30 days' SCOPE 'catalog:read table:read'
----
CREATE PERSONAL ACCESS TOKEN ci_token2 FOR = alice TTL = '7 days' SCOPE = 'table:read'
----
CREATE PERSONAL ACCESS TOKEN ci_token3 FOR=alice TTL='90 days' SCOPE='catalog:read namespace:read table:read table:data'
----
CREATE PERSONAL ACCESS TOKEN nightly SCOPE 'table:write' TTL '1 days'
----
DROP PERSONAL ACCESS TOKEN laptop
----
DROP PERSONAL ACCESS TOKEN IF EXISTS ci_token FOR alice
----
DROP PERSONAL ACCESS TOKEN ci_token2 FOR = alice
----
DROP PERSONAL ACCESS TOKEN ci_token3 FOR=alice
----
SHOW PERSONAL ACCESS TOKENS
----
SHOW PERSONAL ACCESS TOKENS FOR alice
----
CREATE WEBHOOK audit_sink URL 'https://hooks.example.com/floe' SECRET 'whsec-0123456789abcdef'
----
CREATE WEBHOOK IF NOT EXISTS audit_sink URL = 'https://hooks.example.com/floe' SECRET = 'whsec-0123456789abcdef' EVENTS = ('create_user', 'drop_user')
----
CREATE WEBHOOK user_events URL='https://hooks.example.com/u' SECRET='whsec-fedcba9876543210' EVENTS=('user.')
----
CREATE WEBHOOK pat_events URL 'https://hooks.example.com/p' SECRET 'whsec-aaaaaaaaaaaaaaaa' EVENTS ('create_pat', 'drop_service_account', 'user.')
----
CREATE WEBHOOK w2 SECRET = 'whsec-bbbbbbbbbbbbbbbb' URL = 'https://hooks.example.com/w2'
----
DROP WEBHOOK audit_sink
----
DROP WEBHOOK IF EXISTS audit_sink
----
SHOW WEBHOOKS
----
GRANT MANAGE USERS TO USER alice
----
GRANT MANAGE PATS TO USER alice
----
GRANT MANAGE SERVICE ACCOUNTS TO USER alice
----
GRANT MANAGE USERS, MANAGE PATS, MANAGE SERVICE ACCOUNTS TO USER "Grace.Hopper"
----
REVOKE MANAGE USERS FROM USER alice
----
REVOKE MANAGE PATS FROM USER alice
----
REVOKE MANAGE SERVICE ACCOUNTS FROM USER alice
----
REVOKE MANAGE USERS, MANAGE SERVICE ACCOUNTS FROM USER alice
----
CREATE ROLE analyst
----
CREATE ROLE IF NOT EXISTS analyst
----
DROP ROLE analyst
----
DROP ROLE IF EXISTS analyst
----
GRANT ROLE analyst TO USER alice
----
REVOKE ROLE analyst FROM USER alice

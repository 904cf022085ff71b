-- Reserved for principal management (users, passwords, MFA, PATs, keypairs, invitations, privileges, audit log, webhooks); filled in by the work on that context.
SELECT 1;

-- Reserved for query history and sessions; filled in by the work on that context.
SELECT 1;

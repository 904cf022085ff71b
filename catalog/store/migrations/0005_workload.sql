-- Reserved for workload management; filled in by the work on that context.
SELECT 1;

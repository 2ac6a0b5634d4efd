"""One run of cases against a backend: selection, shards, isolation and workers, the journal,
retries, the baseline and the results document (used by `dmlconf run`, the pytest plugin and
`dmlconf explore`)."""

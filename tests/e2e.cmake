# e2e tests: owned by the e2e stage.

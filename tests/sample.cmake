# sample tests: owned by the sample stage.

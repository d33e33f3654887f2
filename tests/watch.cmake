# watch tests: owned by the watch stage.

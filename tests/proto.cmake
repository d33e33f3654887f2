# proto tests: owned by the proto stage.

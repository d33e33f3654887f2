# record tests: owned by the record stage.

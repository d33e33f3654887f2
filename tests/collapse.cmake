# collapse tests: owned by the collapse stage.

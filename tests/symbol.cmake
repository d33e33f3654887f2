# symbol tests: owned by the symbol stage.

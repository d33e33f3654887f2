# render tests: owned by the render stage.

# agent tests: owned by the agent stage.

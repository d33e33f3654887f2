# daemon: the maps a stopping watch leaves and the next one expires (leftovers, handoff), over
# the JVM set's fake /proc trees; the daemon as a whole runs in the watch e2e tests (e2e.cmake).
fg_unit_test(test_leftovers SOURCES unit/daemon/test_leftovers.c LIBS fg_daemon
	PRIVATE collector/daemon)

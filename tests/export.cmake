# export: profile labels, the profile directory (retention, index, safe writes) and the
# Pyroscope pusher's URL and bounded queue (unit); rolling profiles of two containers,
# retention, and push to a receiver that is down then up (e2e).
foreach(t labels profdir push)
	fg_unit_test(test_${t} SOURCES unit/export/test_${t}.c LIBS fg_export)
endforeach()
if(FG_E2E)
	fg_e2e_test(e2e_watch_profiles watch_profiles.sh TIMEOUT 180)
	fg_e2e_test(e2e_watch_push watch_push.sh TIMEOUT 180)
	fg_e2e_test(e2e_watch_profiles_stall watch_profiles_stall.sh TIMEOUT 180)
	# --event cpu,offcpu: both profiles per interval, their units, pushes and top (~30 s).
	fg_e2e_test(e2e_watch_events watch_events.sh TIMEOUT 120)
endif()

# index.html in a real browser (tests/browser/flame_browser.py --index): a fixture directory.
add_executable(profdir_fixture unit/export/profdir_fixture.c)
target_link_libraries(profdir_fixture PRIVATE fg_export)
# The roller over the session's seams (fakes in tests/unit/session/session_fakes.h).
fg_unit_test(test_roller SOURCES unit/export/test_roller.c LIBS fg_export
	PRIVATE collector/session tests/unit/session)

# Real containers (label e2e): podman + runc run the images built from docker/ (the seeds'
# scenario, tests/containers/fleet.sh). The images are built on the first run (a few minutes:
# Debian's archive via mmdebstrap, then the Dockerfiles) and reused while the Dockerfiles and
# the sources compiled into them are unchanged.
add_test(NAME e2e_containers_fleet COMMAND ${PROJECT_SOURCE_DIR}/tests/containers/fleet.sh)
set_tests_properties(e2e_containers_fleet PROPERTIES LABELS "e2e;containers" RUN_SERIAL ON
	TIMEOUT 1200 SKIP_RETURN_CODE 77
	ENVIRONMENT "FG_SOURCE_DIR=${PROJECT_SOURCE_DIR};FG_BUILD_DIR=${PROJECT_BINARY_DIR};FGCOLLECT=$<TARGET_FILE:fgcollect>;FGAGENT=$<TARGET_FILE:fgagent>")

# The same images on Docker Engine, Debian 12's docker.io 20.10 and docker-compose 1.29
# (tests/containers/docker.sh): a dockerd of its own (vfs storage, no iptables, no bridge), the
# podman-built images moved over with `podman save | docker load`, the collector started by
# docker-compose from docker/docker-compose.yml.
add_test(NAME e2e_containers_docker COMMAND ${PROJECT_SOURCE_DIR}/tests/containers/docker.sh)
set_tests_properties(e2e_containers_docker PROPERTIES LABELS "e2e;containers" RUN_SERIAL ON
	TIMEOUT 1200 SKIP_RETURN_CODE 77
	ENVIRONMENT "FG_SOURCE_DIR=${PROJECT_SOURCE_DIR};FG_BUILD_DIR=${PROJECT_BINARY_DIR};FGCOLLECT=$<TARGET_FILE:fgcollect>;FGAGENT=$<TARGET_FILE:fgagent>")

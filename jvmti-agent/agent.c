// SPDX-License-Identifier: MIT
/* agent.c - placeholder until the agent stage lands. */
#include <jvmti.h>

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)vm;
	(void)options;
	(void)reserved;
	return JNI_ERR;
}

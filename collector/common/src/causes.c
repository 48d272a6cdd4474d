/* SPDX-License-Identifier: MIT */
/*
 * The names of the causes of idle time (gaptrace/causes.h): one table for
 * the machine name, one for the name a person reads.
 */
#include "gaptrace/causes.h"

static const char *const cause_names[GT_CAUSE_COUNT] = {
	"host_busy",	 "sync_turnaround", "launch_bound", "transfer",	 "dependency",
	"other_process", "unknown",	    "startup",	    "data_lost",
};

const char *gt_cause_name(int cause)
{
	return cause >= 0 && cause < GT_CAUSE_COUNT ? cause_names[cause] : "?";
}

const char *gt_cause_label(int cause)
{
	static const char *const label[GT_CAUSE_COUNT] = {
		"host_work",	 "after_sync", "launching", "transfer",	 "dependency",
		"other_process", "unknown",    "startup",   "data_lost",
	};
	return cause >= 0 && cause < GT_CAUSE_COUNT ? label[cause] : "?";
}

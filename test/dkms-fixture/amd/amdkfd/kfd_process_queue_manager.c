// SPDX-License-Identifier: GPL-2.0
/* Fixture: definitions kfd-src-layout reads prototypes from (never built). */
#include "kfd_priv.h"

int pqm_create_queue(struct process_queue_manager *pqm,
		     struct kfd_node *dev,
		     struct queue_properties *properties,
		     unsigned int *qid,
		     const struct kfd_criu_queue_priv_data *q_data,
		     const void *restore_mqd,
		     const void *restore_ctl_stack,
		     uint32_t *p_doorbell_offset_in_process)
{
	return 0;
}

int pqm_destroy_queue(struct process_queue_manager *pqm, unsigned int qid)
{
	return 0;
}

int pqm_update_queue_properties(struct process_queue_manager *pqm,
				unsigned int qid, struct queue_properties *p)
{
	return 0;
}

void pqm_uninit(struct process_queue_manager *pqm)
{
}

struct queue *pqm_get_user_queue(struct process_queue_manager *pqm,
				 unsigned int qid)
{
	return NULL;
}

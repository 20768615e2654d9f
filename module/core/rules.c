// SPDX-License-Identifier: GPL-2.0
/*
 * rules.c - where a queue's effective priority comes from.
 *
 * Highest first (enum gp_prio_source):
 *   1. gp_queue_ctl[tgid:qid].priority, then gp_prio[tgid] (only when
 *      set for the process KFD's lead thread belongs to: its start);
 *   2. gp_prio_cgroup: the rule on the process's cgroup v2, or on the
 *      nearest ancestor that has one (a rule covers its subtree, the
 *      deepest rule wins); gp_prio_hook (a container's annotation) the
 *      same, but capped by the nearest gp_prio_cgroup rule on its cgroup
 *      or above (an administrator's rule is a ceiling for pod authors);
 *   3. GPREEMPT_PRIORITY=<0..15|low|normal|high> in the process's
 *      environment: only when enabled (env_priority / gp_config.env), and
 *      lowered to env_max_priority and to user_max_priority.  It sits below the cgroup rules, so a
 *      process can never raise itself above a cgroup rule an administrator
 *      set: inside a cgroup that has a rule the variable is not consulted;
 *   4. gp_prio_comm, on the process's current comm (lowered to
 *      user_max_priority: the user chooses the name);
 *   5. the queue's KFD priority (lowered to user_max_priority: any user
 *      sets 0..15).
 *
 * Monitor thread only, never in probe context.  Rules are resolved once per
 * process (queue entries once per queue) and again when the rules
 * generation moves: gpreemptctl bumps gp_config.rules_gen after each write,
 * which gp_rules_tick() sees on the next tick; raw bpftool writes, cgroup
 * moves and comm changes are picked up by re-resolving each process every
 * GP_RULES_RESCAN_MS, at most GP_RULES_RESCAN_PER_TICK processes per tick
 * (so the periodic work is spread, never a 1000-process spike in one
 * tick).  In deep idle (monitor.c) a queue without work waits
 * GP_RULES_IDLE_RESCAN_MS instead: its priority decides nothing until it
 * has work, and a queue with work is resolved as before, in the tick that
 * first sees the work.  The environment is read once per process.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "params.h"
#include "kfd/ptr_access.h"
#include "core/registry.h"
#include "core/maps.h"
#include "core/rules.h"
#include "monitor/monitor.h"

/* Environment bytes read per process: the variable must be in the first 32 KiB. */
#define GP_ENV_MAX (32 * 1024)
/* Periodic re-resolves per tick (rule changes through gpreemptctl: unbounded). */
#define GP_RULES_RESCAN_PER_TICK 32
/*
 * The periodic re-resolve of a queue without work, in deep idle: one
 * resolve costs about as much as the rest of a deep-idle tick, and an idle
 * queue's priority decides nothing until it has work (then it is resolved
 * again in the tick that sees the work, if older than GP_RULES_RESCAN_MS).
 */
#define GP_RULES_IDLE_RESCAN_MS 10000
/* Give up on an environment with pages not present after this long. */
#define GP_ENV_DEADLINE_MS 2000
/*
 * Pid rules whose process is gone are deleted this often: long before a
 * pid comes round again (they are never applied to another process anyway).
 */
#define GP_PID_SWEEP_MS 1000
/* Ancestors walked for a cgroup rule (cgroup v2 trees are a few levels deep). */
#define GP_CGROUP_MAX_DEPTH 64

static const char gp_env_var[] = "GPREEMPT_PRIORITY=";

static u64 gp_rules_gen = 1;	/* local generation, bumped on any change */
static u32 gp_rules_map_gen;	/* last gp_config.rules_gen seen */
static u64 gp_rules_now;
static u64 gp_rules_swept;	/* last gp_maps_sweep_prio_pid() */
static unsigned int gp_rules_budget;
static bool gp_env_on;
static int gp_env_cap;

/* "low", "normal", "high" or 0..15; -1 when it is none of those. */
static int gp_rules_parse_prio(const char *s)
{
	unsigned int v;

	if (!strcmp(s, "low"))
		return GP_PRIO_LOW;
	if (!strcmp(s, "normal"))
		return GP_PRIO_NORMAL;
	if (!strcmp(s, "high"))
		return GP_PRIO_HIGH;
	if (kstrtouint(s, 10, &v) || v > GP_PRIO_MAX)
		return -1;
	return v;
}

/*
 * GPREEMPT_PRIORITY of @pr (first occurrence, as getenv) into pr->env_prio,
 * and pr->env_read once known.  The read never faults: a page of
 * the environment that is not present ends the copy, and the variable is
 * looked for in what came before it.  Not found there, the read is tried
 * again at the next resolves (every GP_RULES_RESCAN_MS) until
 * GP_ENV_DEADLINE_MS after the first try, then taken as absent.
 */
static void gp_rules_read_env(struct gp_proc *pr)
{
	static char buf[GP_ENV_MAX + 1];	/* monitor thread only */
	bool partial;
	int len, prio = -1;
	char *p;

	len = gp_ptr_read_env(pr, buf, sizeof(buf), &partial);
	gp_stats.env_reads++;
	for (p = buf; len > 0 && p < buf + len; p += strlen(p) + 1) {
		if (strncmp(p, gp_env_var, sizeof(gp_env_var) - 1))
			continue;
		prio = gp_rules_parse_prio(p + sizeof(gp_env_var) - 1);
		partial = false;	/* found: known, whatever came after it */
		break;
	}
	if (len < 0 || partial) {
		if (!pr->env_first_ns)
			pr->env_first_ns = gp_rules_now ?: 1;
		if (gp_rules_now - pr->env_first_ns < GP_ENV_DEADLINE_MS * NSEC_PER_MSEC)
			return;
		pr_debug("process %d: environment unreadable for %d ms: no GPREEMPT_PRIORITY\n",
			 pr->tgid, GP_ENV_DEADLINE_MS);
	}
	pr->env_prio = prio;
	pr->env_read = true;
}

/*
 * The cgroup rule over @task's cgroup v2, or -1.  The deepest rule wins,
 * except that a container's rule (gp_prio_hook: gpreemptctl hook, from an
 * annotation any pod author sets) is capped by the nearest administrator
 * rule (gp_prio_cgroup) on its cgroup or an ancestor: min(container, admin).
 * An administrator's "low" on a parent slice holds for every container
 * below it, now and after any later change of that rule.
 */
static int gp_rules_cgroup(struct task_struct *task)
{
	struct cgroup *cgrp;
	int depth = 0, hook = -1, prio;

	rcu_read_lock();
	for (cgrp = task_dfl_cgroup(task); cgrp && depth < GP_CGROUP_MAX_DEPTH;
	     cgrp = cgroup_parent(cgrp), depth++) {
		if (gp_maps_prio_cgroup(cgroup_id(cgrp), &prio)) {
			if (hook >= 0)
				prio = min(prio, hook);
			rcu_read_unlock();
			return prio;
		}
		if (hook < 0 && gp_maps_prio_hook(cgroup_id(cgrp), &prio))
			hook = prio;
	}
	rcu_read_unlock();
	return hook;
}

/**
 * gp_rules_task_start() - when @task started, as a pid rule names it
 * @task: a thread group's lead thread
 *
 * /proc/PID/stat's starttime in the initial time namespace: start_boottime
 * in clock ticks of USER_HZ (nsec_to_clock_t(), fs/proc/array.c
 * do_task_stat()), what gpreemptctl reads and stores in the rule.  exec
 * from another thread keeps it (de_thread() copies it to the new leader).
 *
 * Return: struct gp_prio_pid.start of @task's process.
 */
u64 gp_rules_task_start(struct task_struct *task)
{
	BUILD_BUG_ON(NSEC_PER_SEC % USER_HZ);
	return div_u64(task->start_boottime, NSEC_PER_SEC / USER_HZ);
}

/*
 * Does a process @tgid that started at @start live (a zombie leader
 * included: its pid is not free yet)?  For gp_maps_sweep_prio_pid().
 */
static bool gp_rules_pid_alive(pid_t tgid, u64 start)
{
	struct task_struct *task;
	bool alive;

	rcu_read_lock();
	task = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	alive = task && gp_rules_task_start(task) == start;
	rcu_read_unlock();
	return alive;
}

/* Process-level rules (sources 1b..4) of @pr. */
static void gp_rules_resolve_proc(struct gp_proc *pr)
{
	/*
	 * KFD's lead thread, held: not the process @pr->tgid names now, which
	 * is another one once the leader is reaped and its pid reused.
	 */
	struct task_struct *task = pr->lead;
	u64 t0 = ktime_get_ns(), dt;
	bool first = !pr->rules_gen;
	int prio;

	pr->rules_gen = gp_rules_gen;
	pr->rules_ns = gp_rules_now;
	pr->rule_prio = -1;
	pr->rule_src = GP_SRC_KFD;
	if (READ_ONCE(pr->dead))
		return;
	/* m12: a prctl(PR_SET_NAME) after registration is seen here. */
	if (task) {
		get_task_comm(pr->comm, task);
		/* gp_cgroups charges the cgroup it is in now. */
		rcu_read_lock();
		pr->cgid = cgroup_id(task_dfl_cgroup(task));
		rcu_read_unlock();
	}
	/* A rule set for an earlier process with this pid is not its. */
	if (task && gp_maps_prio_pid(pr->tgid, pr->start, &prio)) {
		pr->rule_src = GP_SRC_PID;
		goto out;
	}
	if (task) {
		prio = gp_rules_cgroup(task);
		if (prio >= 0) {
			pr->rule_src = GP_SRC_CGROUP;
			goto out;
		}
		if (gp_env_on && !pr->env_read)
			gp_rules_read_env(pr);
	}
	if (gp_env_on && pr->env_read && pr->env_prio >= 0) {
		prio = min(pr->env_prio, gp_env_cap);
		pr->rule_src = GP_SRC_ENV;
		goto out;
	}
	if (gp_maps_prio_comm(pr->comm, &prio)) {
		pr->rule_src = GP_SRC_COMM;
		goto out;
	}
	prio = -1;
out:
	pr->rule_prio = prio;
	dt = ktime_get_ns() - t0;
	gp_stats.rule_resolves++;
	gp_stats.rule_resolve_ns += dt;
	gp_stats.rule_resolve_ns_max = max(gp_stats.rule_resolve_ns_max, dt);
	if (first) {
		gp_stats.rule_first_resolves++;
		gp_stats.rule_first_resolve_ns += dt;
	}
}

/**
 * gp_rules_tick() - notice rule changes; once per monitor tick
 * @now: monotonic time in ns
 *
 * A changed gp_config.rules_gen or a changed environment setting makes
 * every process and queue resolve again on its next gp_rules_apply(); and
 * a new budget of periodic re-resolves is granted.
 */
void gp_rules_tick(u64 now)
{
	struct gp_config cfg = { 0 };
	bool env_on = READ_ONCE(gp_param.env_priority);
	int cap = READ_ONCE(gp_param.env_max_priority);
	bool changed = false;

	if (gp_maps_config(&cfg)) {
		/* Out-of-range fields: the monitor rejects and counts the whole value. */
		if (cfg.env <= 2 && cfg.env_max_priority <= GP_PRIO_MAX) {
			if (cfg.env)
				env_on = cfg.env == 1;
			if (cfg.env_max_priority)
				cap = cfg.env_max_priority;
		}
		if (cfg.rules_gen != gp_rules_map_gen) {
			gp_rules_map_gen = cfg.rules_gen;
			changed = true;
		}
	}
	if (env_on != gp_env_on || cap != gp_env_cap) {
		gp_env_on = env_on;
		gp_env_cap = cap;
		changed = true;
	}
	if (changed)
		gp_rules_gen++;
	gp_rules_now = now;
	gp_rules_budget = GP_RULES_RESCAN_PER_TICK;
	if (now - gp_rules_swept >= GP_PID_SWEEP_MS * NSEC_PER_MSEC) {
		gp_rules_swept = now;
		gp_maps_sweep_prio_pid(gp_rules_pid_alive);
	}
}

/*
 * Resolved at an older generation, or due for its periodic re-resolve
 * (every GP_RULES_IDLE_RESCAN_MS when @idle).
 */
static bool gp_rules_stale(const struct gp_proc *pr, bool idle)
{
	u64 every = (idle ? GP_RULES_IDLE_RESCAN_MS : GP_RULES_RESCAN_MS) * NSEC_PER_MSEC;

	if (pr->rules_gen != gp_rules_gen)
		return true;
	if (gp_rules_now - pr->rules_ns < every || !gp_rules_budget)
		return false;
	gp_rules_budget--;
	return true;
}

/**
 * gp_rules_apply() - effective priority of a queue
 * @e: the queue (monitor snapshot entry, not gone)
 * @prio: in: the queue's KFD priority; out: the effective priority
 * @idle: @e has no work and the monitor is in deep idle: its periodic
 *	  re-resolve can wait GP_RULES_IDLE_RESCAN_MS
 *
 * A priority from a source the process's user controls (its KFD priority,
 * its comm, its environment) is lowered to user_max_priority:
 * only rules root sets (queue, pid, cgroup) rank above it.
 *
 * Resolves @e's process (and then @e itself) when the rules generation
 * moved since it last was, or when its periodic re-resolve is due and the
 * tick's budget allows; otherwise uses the cached result.  Also sets
 * @e->hold, and the comm and hold fields of @e->info.
 *
 * Return: the enum gp_prio_source of *@prio.
 */
u32 gp_rules_apply(struct gp_queue *e, int *prio, bool idle)
{
	int cap = READ_ONCE(gp_param.user_max_priority);
	struct gp_proc *pr = e->proc;

	if (gp_rules_stale(pr, idle))
		gp_rules_resolve_proc(pr);
	if (e->rules_gen != pr->rules_gen || e->rules_ns != pr->rules_ns) {
		struct gp_queue_key key = { .tgid = pr->tgid, .qid = gp_map_qid(e) };
		u32 hold = 0;
		int qprio = -1;

		e->rules_gen = pr->rules_gen;
		e->rules_ns = pr->rules_ns;
		if (!gp_maps_queue_ctl(&key, &qprio, &hold))
			qprio = -1;
		e->rule_prio = qprio;
		e->hold = hold != 0;
		e->hold_disabled = hold == 2;
		if (e->info.held != hold || memcmp(e->info.comm, pr->comm, sizeof(e->info.comm))) {
			e->info.held = hold;
			memcpy(e->info.comm, pr->comm, sizeof(e->info.comm));
			e->dirty = true;
		}
	}
	if (e->rule_prio >= 0) {
		*prio = e->rule_prio;
		return GP_SRC_QUEUE;
	}
	if (pr->rule_prio >= 0) {
		*prio = pr->rule_prio;
		if (pr->rule_src == GP_SRC_COMM || pr->rule_src == GP_SRC_ENV)
			*prio = min(*prio, cap);
		return pr->rule_src;
	}
	*prio = min(*prio, cap);
	return GP_SRC_KFD;
}

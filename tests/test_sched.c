/* test_sched.c: the micro-batch pipeline on hand-worked cases, the fast
 * path against the reference list schedule, and OFMS against naive. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "helpers.h"
#include "karat.h"

static struct pipe_in one_layer(int kind, int m, double pre, double out,
				double attn, double back, double post)
{
	struct pipe_in in = {.kind = kind, .m = m, .layers = 1};
	for (int i = 0; i < m; i++) {
		in.dur[i][T_PRE] = pre, in.dur[i][T_OUT] = out, in.dur[i][T_ATTN] = attn;
		in.dur[i][T_BACK] = back, in.dur[i][T_POST] = post;
	}
	return in;
}

static double span(const struct pipe_in *in)
{
	struct pipe_out o;
	cr_assert_eq(pipe_list(in, &o, NULL, 0), 0);
	return o.makespan;
}

/* The reference schedule and the fast path both take want. */
static void both_paths(const struct pipe_in *in, double want)
{
	struct pipe_out f;
	cr_expect(near(span(in), want, 1e-12), "reference %g, want %g", span(in), want);
	cr_assert_eq(pipe_fast(in, &f), 0);
	cr_expect(near(f.makespan, want, 1e-12), "fast path %g, want %g", f.makespan, want);
}

Test(sched, one_microbatch_is_the_sum_of_its_chain)
{
	/* m = 1: nothing can overlap; every schedule is the plain sum. */
	struct pipe_in in = {.m = 1, .layers = 3};
	double per_layer = 0;
	for (int t = 0; t < T_LAYER; t++)
		per_layer += in.dur[0][t] = 0.5 + t;
	in.dur[0][T_TAIL_G] = 2, in.dur[0][T_TAIL_L] = 0.25, in.dur[0][T_TAIL_M] = 1;
	for (int k = 0; k < SCHED_N; k++) {
		in.kind = k;
		cr_expect(near(span(&in), 3 * per_layer + 3.25, 1e-12), "%s: %g", sched_names[k],
			  span(&in));
	}
}

Test(sched, two_microbatches_hand_worked)
{
	/* pre 1 (GPU), attn 2 (memdev), post 1 (GPU), no communication.
	 * GPU: pre0 [0,1] pre1 [1,2]; memdev: attn0 [1,3] attn1 [3,5];
	 * GPU: post0 [3,4] post1 [5,6] -> 6.  Serial: 2 x (1 + 2 + 1) = 8. */
	struct pipe_in in = one_layer(SCHED_NAIVE, 2, 1, 0, 2, 0, 1);
	cr_expect(near(span(&in), 6, 1e-12));
	in.kind = SCHED_OFMS;
	cr_expect(near(span(&in), 6, 1e-12));
	in.kind = SCHED_SERIAL;
	cr_expect(near(span(&in), 8, 1e-12));
}

Test(sched, naive_puts_communication_on_the_gpu_stream)
{
	/* every stage 1, m = 2, one layer.
	 * naive: GPU pre0 0-1 out0 1-2 pre1 2-3 out1 3-4; memdev attn0 2-3
	 * attn1 4-5; GPU back0 4-5 post0 5-6 back1 6-7 post1 7-8 -> 8.
	 * ofms: GPU pre0 0-1 pre1 1-2; link out0 1-2 out1 2-3; memdev attn0
	 * 2-3 attn1 3-4; link back0 3-4 back1 4-5; GPU post0 4-5 post1 5-6 -> 6. */
	struct pipe_in in = one_layer(SCHED_NAIVE, 2, 1, 1, 1, 1, 1);
	cr_expect(near(span(&in), 8, 1e-12), "naive %g", span(&in));
	in.kind = SCHED_OFMS;
	cr_expect(near(span(&in), 6, 1e-12), "ofms %g", span(&in));
	struct pipe_event ev[16];
	struct pipe_out o;
	pipe_list(&in, &o, ev, 16);
	/* OFMS timed seven orders here (three greedy ones, the round robin
	 * with communication off and on the GPU stream, and the round robin
	 * staggered by one and by two of a layer's three GPU runs: pre, post,
	 * experts), each of all 2 x T_ALL tasks */
	cr_expect_eq(o.tasks, 7 * 2 * T_ALL);
	cr_expect(near(o.busy[RES_LINK], 4, 1e-12));
	cr_expect(near(o.busy[RES_GPU], 4, 1e-12));
	cr_expect(near(o.bubble[RES_MEM], 1 - 2.0 / 6, 1e-12));
	for (int i = 1; i < 16; i++) /* events come in start order */
		cr_expect_geq(ev[i].start, ev[i - 1].start);
}

/* Two identical micro-batches, two layers: pre 1, out 2, attn 2, post 3,
 * experts 3; the GPU works 2 x 2 x 7 = 28.  Greedy, longest wait first
 * (and the round robin, the same here): pre0 0-1 pre1 1-2 out0 1-3 out1
 * 3-5 attn0 3-5 attn1 5-7 post0 5-8 post1 8-11 exp0 11-14; at 14 exp1
 * (ready since 11) goes before layer 1's pre0 (ready at 14): exp1 14-17
 * pre0 17-18 pre1 18-19, and layer 1 repeats layer 0 from 17 -> 34.  With
 * communication on the GPU stream the round robin takes 36.  A layer's
 * earlier task first: pre0 14-15, so out0 15-17 and attn0 17-19 run
 * beside exp1 15-18; pre1 18-19 out1 19-21 attn1 21-23, post0 19-22 exp0
 * 22-25 post1 25-28 exp1 28-31 -> 31. */
Test(sched, ofms_starts_the_devices_work_first_where_that_pays)
{
	struct pipe_in in = one_layer(SCHED_OFMS, 2, 1, 2, 2, 0, 3);
	in.layers = 2;
	for (int i = 0; i < 2; i++)
		in.dur[i][T_EXP] = 3;
	both_paths(&in, 31);
}

/* pre 1, out 1, back 2, dispatch 1, experts 3 (attn, post, combine 0),
 * full-duplex link, two layers.  Greedy (either rule) keeps both
 * micro-batches side by side; the round robin staggered by one GPU run
 * (micro-batch 0's pre and post before micro-batch 1's pre):
 *   pre0 0-1 out0 1-2 back0 2-4 [post0 4] pre1 4-5 disp0 4-5 exp0 5-8
 *   out1 5-6 back1 6-8 [post1 8] pre0 8-9 disp1 8-9 out0 9-10 exp1 9-12
 *   back0 10-12 [post0 12] disp0 12-13 pre1 13-14 exp0 14-17 out1 14-15
 *   back1 15-17 [post1 17] disp1 17-18 exp1 18-21 -> 21,
 * against 24 for the greedy and the round robin, and 22 for the greedy
 * that takes a layer's earlier task first. */
Test(sched, ofms_staggers_the_micro_batches_where_that_pays)
{
	struct pipe_in in = one_layer(SCHED_OFMS, 2, 1, 1, 0, 2, 0);
	in.layers = 2, in.duplex = 1;
	for (int i = 0; i < 2; i++)
		in.dur[i][T_DISP] = 1, in.dur[i][T_EXP] = 3;
	both_paths(&in, 21);
}

/* pre 3, attn 3, back 2, post 1, dispatch 2, experts 2 (out, combine 0),
 * full-duplex link, three layers, two micro-batches; the GPU works
 * 2 x 3 x 6 = 36.  Every earlier order takes 48 (the greedy ones: at 27,
 * as micro-batch 0's experts end, pre0 goes before post1, and micro-batch
 * 1 falls behind for good).  The greedy schedule that ranks the GPU's
 * tasks before communication, furthest micro-batch first, starts post1
 * at 27 while combine0 waits its turn:
 *   pre0 0-3 pre1 3-6 post0 8-9 exp0 11-13 post1 13-14 pre0 14-17
 *   exp1 17-19 pre1 19-22 post0 22-23 exp0 25-27 post1 27-28 pre0 28-31
 *   exp1 31-33 pre1 33-36 post0 36-37 exp0 39-41 post1 41-42 exp1 44-46
 * on the GPU (attn after each pre, 3 long) -> 46. */
Test(sched, ofms_keeps_the_micro_batches_in_step_where_that_pays)
{
	struct pipe_in in = one_layer(SCHED_OFMS, 2, 3, 0, 3, 2, 1);
	in.layers = 3, in.duplex = 1;
	for (int i = 0; i < 2; i++)
		in.dur[i][T_DISP] = 2, in.dur[i][T_EXP] = 2;
	both_paths(&in, 46);
}

Test(sched, gpu_only_runs_attention_on_the_gpu)
{
	struct pipe_in in = one_layer(SCHED_OFMS, 2, 1, 0, 2, 0, 1);
	in.attn_on_gpu = 1; /* everything on one GPU: no overlap left */
	cr_expect(near(span(&in), 8, 1e-12));
}

static void random_classes(struct pipe_in *in, unsigned *seed, int random);

static void random_in(struct pipe_in *in, unsigned *seed)
{
	memset(in, 0, sizeof *in);
	in->kind = rand_r(seed) % SCHED_N;
	in->m = 1 + rand_r(seed) % PIPE_MAX_MB;
	in->layers = 1 + rand_r(seed) % 90;
	in->attn_on_gpu = rand_r(seed) % 4 == 0;
	in->duplex = rand_r(seed) % 2; /* issue 11: full-duplex links and links */
	in->link_on_net = rand_r(seed) % 4 == 0; /* shared with the all-to-all */
	for (int i = 0; i < in->m; i++)
		for (int t = 0; t < T_ALL; t++) {
			int r = rand_r(seed) % 6;
			/* zeros, lattice values (ties) and continuous values */
			in->dur[i][t] = r == 0 ? 0 : r < 3 ? (rand_r(seed) % 20) * 0.5e-4
							   : rand_r(seed) / (double)RAND_MAX * 1e-3;
		}
}

Test(sched, fast_path_equals_the_reference_list_schedule)
{
	unsigned seed = 7;
	long full = 0, fast = 0;
	for (int k = 0; k < 3000; k++) {
		struct pipe_in in;
		random_in(&in, &seed);
		struct pipe_out a, b;
		cr_assert_eq(pipe_list(&in, &a, NULL, 0), 0);
		cr_assert_eq(pipe_fast(&in, &b), 0);
		cr_assert(near(a.makespan, b.makespan, 1e-9), "case %d (%s m=%d L=%d): %.12g vs %.12g",
			  k, sched_names[in.kind], in.m, in.layers, a.makespan, b.makespan);
		for (int x = 0; x < RES_N; x++)
			cr_assert(fabs(a.busy[x] - b.busy[x]) <= 1e-9 * (a.makespan + 1e-30),
				  "case %d busy %s", k, pipe_res_names[x]);
		cr_assert_eq(a.order, b.order, "case %d: the reference's order %d, the fast path's %d",
			     k, a.order, b.order);
		full += a.tasks, fast += b.tasks;
	}
	cr_expect_lt(fast, full, "the fast path should skip layers (%ld of %ld)", fast, full);
}

/* pipe_fast's hint (in->first) changes the work only: every order tried
 * first gives the same winner, makespan and busy times, bit for bit. */
Test(sched, the_order_tried_first_never_changes_the_result)
{
	unsigned seed = 23;
	long saved = 0;
	for (int k = 0; k < 1500; k++) {
		struct pipe_in in;
		random_in(&in, &seed);
		if (k % 3 == 0)
			random_classes(&in, &seed, k % 2);
		struct pipe_out a, b;
		in.first = 0;
		cr_assert_eq(pipe_fast(&in, &a), 0);
		for (int f = -1; f <= 8; f++) {
			in.first = f;
			cr_assert_eq(pipe_fast(&in, &b), 0);
			cr_assert(b.makespan == a.makespan && b.order == a.order,
				  "case %d, first %d: %.17g (order %d) vs %.17g (order %d)", k, f,
				  b.makespan, b.order, a.makespan, a.order);
			cr_assert(!memcmp(a.busy, b.busy, sizeof a.busy), "case %d, first %d", k, f);
			if (f == a.order)
				saved += a.tasks - b.tasks;
		}
	}
	cr_expect_gt(saved, 0, "trying the winner first should save work (%ld tasks)", saved);
}

Test(sched, makespan_is_at_least_every_resource_and_every_chain)
{
	unsigned seed = 11;
	for (int k = 0; k < 2000; k++) {
		struct pipe_in in;
		random_in(&in, &seed);
		struct pipe_out o;
		pipe_list(&in, &o, NULL, 0);
		for (int x = 0; x < RES_N; x++)
			cr_assert_geq(o.makespan * (1 + 1e-12), o.busy[x] - 1e-15);
		for (int i = 0; i < in.m; i++) {
			double chain = in.dur[i][T_TAIL_G] + in.dur[i][T_TAIL_L] + in.dur[i][T_TAIL_M];
			for (int t = 0; t < T_LAYER; t++)
				chain += in.layers * in.dur[i][t];
			cr_assert_geq(o.makespan * (1 + 1e-12), chain - 1e-15);
		}
	}
}

Test(sched, bad_input_is_refused)
{
	struct pipe_in in = one_layer(SCHED_OFMS, 2, 1, 0, 2, 0, 1);
	struct pipe_out o;
	in.m = 0;
	cr_expect_eq(pipe_list(&in, &o, NULL, 0), -1);
	in.m = PIPE_MAX_MB + 1;
	cr_expect_eq(pipe_fast(&in, &o), -1);
	in.m = 2;
	in.dur[1][T_ATTN] = -1;
	cr_expect_eq(pipe_list(&in, &o, NULL, 0), -1);
	in.dur[1][T_ATTN] = NAN;
	cr_expect_eq(pipe_list(&in, &o, NULL, 0), -1);
}

Test(sched, ofms_is_never_slower_than_naive_on_random_inputs)
{
	unsigned seed = 5;
	for (int k = 0; k < 3000; k++) {
		struct pipe_in in;
		random_in(&in, &seed);
		struct pipe_out a, b, c;
		in.kind = SCHED_NAIVE;
		pipe_list(&in, &a, NULL, 0);
		in.kind = SCHED_OFMS;
		pipe_list(&in, &b, NULL, 0);
		pipe_fast(&in, &c);
		cr_assert_leq(b.makespan, a.makespan * (1 + 1e-12), "case %d m=%d L=%d: ofms %.9g > naive %.9g",
			      k, in.m, in.layers, b.makespan, a.makespan);
		cr_assert(near(b.makespan, c.makespan, 1e-9));
	}
}

/* Issue 11: a full-duplex link carries what comes back beside what goes
 * out.  pre 1, out 2, attn 1, back 2, post 1; m = 2, one layer, OFMS.
 * Half duplex: link out0 1-3 out1 3-5 back0 5-7 back1 7-9 (back0, ready
 * at 4, queues behind out1); post1 9-10 -> 10.
 * Full duplex: out0 1-3 out1 3-5 on one direction, back0 4-6 back1 6-8
 * on the other; post0 6-7 post1 8-9 -> 9.  With the devices on the
 * scale-up link the transfers share the all-to-all's resource. */
Test(sched, out_and_back_overlap_on_a_full_duplex_link)
{
	struct pipe_in in = one_layer(SCHED_OFMS, 2, 1, 2, 1, 2, 1);
	cr_expect(near(span(&in), 10, 1e-12), "half duplex %g", span(&in));
	in.duplex = 1;
	cr_expect(near(span(&in), 9, 1e-12), "full duplex %g", span(&in));
	struct pipe_out f, l;
	cr_assert_eq(pipe_fast(&in, &f), 0);
	cr_assert_eq(pipe_list(&in, &l, NULL, 0), 0);
	cr_expect(near(f.makespan, l.makespan, 1e-12), "fast = reference");
	cr_expect(near(l.busy[RES_LINK], 4, 1e-12) && near(l.busy[RES_BACK], 4, 1e-12));
	in.link_on_net = 1;
	for (int i = 0; i < 2; i++)
		in.dur[i][T_DISP] = 1; /* the all-to-all now queues with them */
	struct pipe_in half = in;
	half.link_on_net = 0;
	cr_expect_gt(span(&in), span(&half), "sharing the all-to-all's link costs time");
	cr_assert_eq(pipe_list(&in, &l, NULL, 0), 0);
	cr_expect(near(l.busy[RES_NET], 2 * (2 + 2) + 2, 1e-12), "%g", l.busy[RES_NET]);
	cr_expect_eq(l.busy[RES_LINK], 0);
}

/* Issue 12: layers of several kinds.  A random input whose layers follow a
 * pattern: a random prefix, then a random period repeated (random == 1:
 * every layer's kind drawn at random). */
static void random_classes(struct pipe_in *in, unsigned *seed, int random)
{
	in->nclass = 2 + rand_r(seed) % (PIPE_MAX_CLASSES - 1);
	for (int c = 1; c < in->nclass; c++)
		for (int i = 0; i < in->m; i++)
			for (int t = 0; t < T_LAYER; t++) {
				int r = rand_r(seed) % 6;
				in->cdur[c][i][t] = r == 0 ? 0 : r < 3 ? (rand_r(seed) % 20) * 0.5e-4
								   : rand_r(seed) / (double)RAND_MAX * 1e-3;
			}
	int prefix = rand_r(seed) % 5, period = 1 + rand_r(seed) % 6;
	unsigned char pat[6];
	for (int p = 0; p < period; p++)
		pat[p] = (unsigned char)(rand_r(seed) % in->nclass);
	for (int l = 0; l < in->layers; l++)
		in->layer_class[l] = random || l < prefix ? (unsigned char)(rand_r(seed) % in->nclass)
							  : pat[(l - prefix) % period];
}

Test(sched, kinds_of_layer_fast_path_equals_the_reference)
{
	unsigned seed = 11;
	long full = 0, fast = 0;
	for (int k = 0; k < 3000; k++) {
		struct pipe_in in;
		random_in(&in, &seed);
		random_classes(&in, &seed, k % 4 == 0);
		struct pipe_out a, b;
		cr_assert_eq(pipe_list(&in, &a, NULL, 0), 0);
		cr_assert_eq(pipe_fast(&in, &b), 0);
		cr_assert(near(a.makespan, b.makespan, 1e-9), "case %d (%s m=%d L=%d classes %d): "
			  "%.12g vs %.12g", k, sched_names[in.kind], in.m, in.layers, in.nclass,
			  a.makespan, b.makespan);
		for (int x = 0; x < RES_N; x++)
			cr_assert(fabs(a.busy[x] - b.busy[x]) <= 1e-9 * (a.makespan + 1e-30),
				  "case %d busy %s", k, pipe_res_names[x]);
		if (k % 4)
			full += a.tasks, fast += b.tasks;
	}
	cr_expect_lt(fast, full / 2, "periodic kinds should be skipped (%ld of %ld)", fast, full);
}

/* Each resource is busy for exactly the work of its tasks, layer by layer
 * in each layer's kind; and kinds with equal durations are one kind. */
Test(sched, kinds_of_layer_keep_every_resources_work)
{
	unsigned seed = 13;
	for (int k = 0; k < 500; k++) {
		struct pipe_in in;
		random_in(&in, &seed);
		if (in.kind == SCHED_SERIAL || in.kind == SCHED_NAIVE || in.kind == SCHED_CMR)
			in.kind = SCHED_OFMS; /* communication on its own resources */
		in.attn_on_gpu = 0, in.link_on_net = 0, in.duplex = 1;
		random_classes(&in, &seed, k % 2);
		double mem = 0;
		for (int i = 0; i < in.m; i++) {
			mem += in.dur[i][T_TAIL_M];
			for (int l = 0; l < in.layers; l++) {
				int c = in.layer_class[l];
				mem += c ? in.cdur[c][i][T_ATTN] : in.dur[i][T_ATTN];
			}
		}
		struct pipe_out a;
		cr_assert_eq(pipe_fast(&in, &a), 0);
		cr_assert(near(a.busy[RES_MEM], mem, 1e-9), "case %d: busy %.12g, work %.12g", k,
			  a.busy[RES_MEM], mem);
		/* the same durations under every class: the one-class schedule */
		struct pipe_in one = in;
		for (int c = 1; c < in.nclass; c++)
			for (int i = 0; i < in.m; i++)
				for (int t = 0; t < T_LAYER; t++)
					one.cdur[c][i][t] = in.dur[i][t];
		struct pipe_out b, c;
		cr_assert_eq(pipe_list(&one, &b, NULL, 0), 0);
		one.nclass = 1;
		cr_assert_eq(pipe_list(&one, &c, NULL, 0), 0);
		cr_assert(near(b.makespan, c.makespan, 1e-12), "case %d: %.15g vs %.15g", k,
			  b.makespan, c.makespan);
	}
}

Test(sched, bad_kinds_of_layer_are_refused)
{
	struct pipe_in in = one_layer(SCHED_OFMS, 2, 1, 1, 1, 1, 1);
	struct pipe_out o;
	in.nclass = 2, in.layer_class[0] = 2;
	cr_expect_eq(pipe_list(&in, &o, NULL, 0), -1, "a class past nclass");
	in.layer_class[0] = 1, in.cdur[1][0][T_ATTN] = -1;
	cr_expect_eq(pipe_fast(&in, &o), -1, "a negative duration in a class");
	in.cdur[1][0][T_ATTN] = 1, in.nclass = PIPE_MAX_CLASSES + 1;
	cr_expect_eq(pipe_list(&in, &o, NULL, 0), -1, "too many classes");
}

/* test_cli.c: the karat binary: exit codes (0 ok, 1 failure, 2 usage),
 * messages, the CSV contract of `karat ops`, write errors. */
#include <criterion/criterion.h>
#include <csv.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static char out[1 << 18], err[1 << 14];

static int run(const char *args)
{
	return run_karat(args, out, sizeof out, err, sizeof err);
}

Test(cli, usage_errors_exit_2)
{
	cr_expect_eq(run(""), 2);
	cr_expect(strstr(err, "karat: no command"), "%s", err);
	cr_expect_eq(run("frobnicate"), 2);
	cr_expect(strstr(err, "unknown command 'frobnicate'"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 1"), 2);
	cr_expect(strstr(err, "required"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 1 --context 1K --bogus 3"), 2);
	cr_expect(strstr(err, "unknown option '--bogus'"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 0 --context 1K"), 2);
	cr_expect(strstr(err, "--batch"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 2.5 --context 1K"), 2);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 1 --context 1K --format xml"), 2);
	cr_expect_eq(run("ops --model gpt-7 --hw h200 --batch 1 --context 1K"), 2);
	cr_expect(strstr(err, "karat: unknown model 'gpt-7' (see karat list models)"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h900 --batch 1 --context 1K"), 2);
	cr_expect_eq(run("ops --batch 1 --batch 2"), 2);
	cr_expect(strstr(err, "given twice"), "%s", err);
	cr_expect_eq(run("list gpus"), 2);
	cr_expect_eq(run("show"), 2);
}

Test(cli, bad_input_exits_1_with_file_and_line)
{
	const char *bad = tmp_ini_str(1, "[model]\nname = x\nlayers = -3\n");
	char args[512];
	snprintf(args, sizeof args, "ops --model %s --hw h200 --batch 1 --context 1K", bad);
	cr_expect_eq(run(args), 1);
	char want[256];
	snprintf(want, sizeof want, "karat: %s:3: model.layers:", bad);
	cr_expect(strncmp(err, want, strlen(want)) == 0, "got: %s", err);
	remove(bad);
	/* beyond the model's context: a failure, not a usage error */
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 1 --context 1M"), 1);
	cr_expect(strstr(err, "exceeds DeepSeek-V3.2's maximum"), "%s", err);
	cr_expect_eq(run("ops --model llama-3.1-70b --hw h200 --batch 1 --context 1K --mtp 1"), 1);
}

Test(cli, help_lists_every_command)
{
	cr_expect_eq(run("help"), 0);
	const char *cmds[] = {"help", "list", "show", "ops", "run"};
	for (int i = 0; i < 5; i++)
		cr_expect(strstr(out, cmds[i]), "help lacks %s", cmds[i]);
	cr_expect_eq(run("help ops"), 0);
	cr_expect(strstr(out, "--context"));
	cr_expect_eq(run("help nothing"), 2);
}

Test(cli, list_and_show)
{
	cr_expect_eq(run("list models"), 0);
	cr_expect(strstr(out, "deepseek-v3.2") && strstr(out, "40016") && strstr(out, "8052"));
	cr_expect_eq(run("list hw"), 0);
	cr_expect(strstr(out, "h200") && strstr(out, "karat") && strstr(out, "nvlink4"));
	cr_expect_eq(run("list algos"), 0);
	cr_expect(strstr(out, "dsa") && strstr(out, "msa"));
	cr_expect_eq(run("show deepseek-v3.2"), 0);
	cr_expect(strstr(out, "sparse.topk") && strstr(out, "src: DS32E config index_topk"),
		  "show must print each value's source");
	cr_expect(strstr(out, "40016 B"));
	cr_expect_eq(run("show h200"), 0);
	cr_expect(strstr(out, "memory.bandwidth") && strstr(out, "4.8 TB/s"));
	/* its calibration: the GEMM fits carried over from the H800 */
	cr_expect(strstr(out, "calibration of the kernel-level values") &&
		  strstr(out, "efficiency.gemm_compute        sibling  h800"), "%s", out);
	cr_expect_eq(run("show nvlink4"), 0);
	cr_expect(strstr(out, "link.a2a_floor        fitted") &&
		  strstr(out, "link.a2a_overlap      fitted") &&
		  strstr(out, "link.allreduce_floor  assumed"), "%s", out);
	cr_expect_eq(run("show nothing-here"), 2);
}

/* libcsv callbacks: collect the rows of a CSV text. */
struct rows {
	char cell[256][8][64];
	int nrow, ncol, maxcol;
};
static void on_field(void *s, size_t len, void *data)
{
	struct rows *r = data;
	if (r->nrow < 256 && r->ncol < 8)
		snprintf(r->cell[r->nrow][r->ncol], 64, "%.*s", (int)len, (char *)s);
	r->ncol++;
}
static void on_row(int c, void *data)
{
	(void)c;
	struct rows *r = data;
	if (r->ncol > r->maxcol)
		r->maxcol = r->ncol;
	r->nrow++;
	r->ncol = 0;
}

Test(cli, ops_csv_contract_and_totals)
{
	cr_assert_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 32 --context 128K "
			 "--gpus 8 --format csv"), 0, "%s", err);
	const char *head = "op,device,count,flops,bytes,intensity_flop_per_byte,time_s,bound\n";
	cr_assert(strncmp(out, head, strlen(head)) == 0, "header: %.100s", out);
	static struct rows r;
	memset(&r, 0, sizeof r);
	struct csv_parser p;
	csv_init(&p, CSV_STRICT);
	cr_assert_eq(csv_parse(&p, out, strlen(out), on_field, on_row, &r), strlen(out));
	csv_fini(&p, on_field, on_row, &r);
	csv_free(&p);
	cr_expect_eq(r.maxcol, 8);
	double f = 0, b = 0, t = 0;
	int seen_names = 0;
	for (int i = 1; i < r.nrow - 1; i++) {
		f += atof(r.cell[i][3]);
		b += atof(r.cell[i][4]);
		t += atof(r.cell[i][6]);
		for (const char *c = r.cell[i][0]; *c; c++)
			cr_expect((*c >= 'a' && *c <= 'z') || *c == '_', "op %s not snake_case",
				  r.cell[i][0]);
		const char *stages[] = {"index_scan", "topk", "gather", "attention"};
		for (int k = 0; k < 4; k++)
			seen_names += strcmp(r.cell[i][0], stages[k]) == 0;
		cr_expect(strcmp(r.cell[i][7], "") != 0, "row %s has no bound", r.cell[i][0]);
	}
	cr_expect_eq(seen_names, 4, "cache-side stages by name");
	const char (*last)[64] = r.cell[r.nrow - 1];
	cr_expect_str_eq(last[0], "total");
	cr_expect_str_eq(last[7], "");
	cr_expect(near(f, atof(last[3]), 1e-9) && near(b, atof(last[4]), 1e-9) &&
		  near(t, atof(last[6]), 1e-9), "totals must add up");
	cr_expect(strstr(out, "dispatch,nvlink4,"), "all-to-all rows run on the link");
}

Test(cli, output_identical_across_runs_and_paths)
{
	static char first[1 << 18];
	cr_assert_eq(run("ops --model minimax-m3 --hw karat --batch 7 --context 300000 --format csv"), 0);
	memcpy(first, out, sizeof first);
	char args[512], model[256];
	snprintf(model, sizeof model, "%s", zoo_path("models/minimax-m3.ini"));
	snprintf(args, sizeof args,
		 "ops --model %s --hw %s --batch 7 --context 300000 --format csv", model,
		 zoo_path("hw/karat.ini"));
	cr_assert_eq(run(args), 0, "%s", err);
	cr_expect_str_eq(out, first);
}

Test(cli, write_errors_are_errors)
{
	const char *bin = getenv("KARAT_BIN");
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s list models >/dev/full 2>/dev/null",
		 bin ? bin : KARAT_DATADIR "/build/karat");
	int st = system(cmd);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
}

Test(cli, algo_swaps_and_refusals)
{
	cr_expect_eq(run("ops --model llama-3.1-70b --hw h200 --batch 4 --context 64K "
			 "--algo quest:budget=1024 --format csv"), 0, "%s", err);
	cr_expect(strstr(out, "\nindex_scan,h200,") && strstr(out, "\ngather,h200,"),
		  "quest adds its stages: %s", out);
	cr_expect_eq(run("ops --model llama-3.1-70b --hw h200 --batch 4 --context 64K --algo dsa"), 1);
	cr_expect(strstr(err, "dsa is trained-only and Llama-3.1-70B was not trained for it"), "%s", err);
	cr_expect(strstr(err, "--force"), "%s", err);
	cr_expect_eq(run("ops --model llama-3.1-70b --hw h200 --batch 4 --context 64K --algo dsa --force"), 0);
	cr_expect_eq(run("ops --model llama-3.1-70b --hw h200 --batch 4 --context 64K --algo mla"), 1);
	cr_expect(strstr(err, "needs mla attention"), "%s", err);
	cr_expect_eq(run("ops --model llama-3.1-70b --hw h200 --batch 4 --context 64K --algo nope"), 2);
	cr_expect(strstr(err, "unknown algorithm 'nope'"), "%s", err);
	cr_expect_eq(run("ops --model llama-3.1-70b --hw h200 --batch 4 --context 64K --algo quest:page=8"), 2);
	cr_expect(strstr(err, "'page' is not a parameter of quest"), "%s", err);
	/* the model's own algorithm keeps the model's values */
	cr_expect_eq(run("ops --model glm-5.2 --hw h200 --batch 4 --context 64K --algo index-share:topk=1K"), 0);
	cr_expect(strstr(out, "algo index-share"), "%s", out);
	cr_expect_eq(run("list algos"), 0);
	const char *names[] = {"gqa", "mla", "dsa", "index-share", "dsv4-csa", "dsv4-hca", "dsv41",
			       "nsa", "moba", "msa", "infllm-v2", "quest", "sparq", "magicpig",
			       "h2o", "snapkv", "streamingllm"};
	for (int i = 0; i < 17; i++)
		cr_expect(strstr(out, names[i]), "list algos lacks %s", names[i]);
	cr_expect(strstr(out, "training_free"));
	cr_expect_eq(run("show sparq"), 0);
	cr_expect(strstr(out, "sparse.ratio") && strstr(out, "Graphcore"), "%s", out);
}

Test(cli, bench_csv_contract_and_errors)
{
	cr_expect_eq(run("bench nosuch"), 2);
	cr_expect(strstr(err, "unknown kernel 'nosuch' (kernels: indexer, topk"), "%s", err);
	cr_expect_eq(run("bench topk --min-time 5"), 2);
	cr_expect(strstr(err, "missing unit"), "%s", err);
	cr_assert_eq(run("bench quest_score --min-time 10ms --format csv"), 0, "%s", err);
	const char *head = "kernel,size,threads,time_s,predicted_s,bytes_per_s,flops_per_s,efficiency\n";
	cr_assert(strncmp(out, head, strlen(head)) == 0, "header: %.120s", out);
	int rows = 0;
	for (const char *p = out; (p = strstr(p, "\nquest_score,")); p++)
		rows++;
	cr_expect_eq(rows, 3, "three sizes");
	cr_expect(strstr(err, "karat bench: conditions:") && strstr(err, "threads"),
		  "conditions go to stderr in CSV mode: %s", err);
}

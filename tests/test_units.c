/* test_units.c: every unit class, and every way a number can be wrong. */
#include <criterion/criterion.h>
#include <math.h>

#include "karat.h"

static double ok(const char *text, enum unit_class c)
{
	double v = -1;
	char why[128] = "";
	cr_assert_eq(unit_parse(text, c, &v, why, sizeof why), 0,
		     "'%s' should parse: %s", text, why);
	return v;
}

static void bad(const char *text, enum unit_class c, const char *reason)
{
	double v = 12345;
	char why[128] = "";
	cr_assert_eq(unit_parse(text, c, &v, why, sizeof why), -1, "'%s' should fail", text);
	cr_assert(strstr(why, reason), "'%s': reason '%s' lacks '%s'", text, why, reason);
	cr_assert_eq(v, 12345, "a failed parse must not write the output");
}

Test(units, bytes_decimal_and_binary)
{
	cr_expect_eq(ok("656", U_BYTES), 656);
	cr_expect_eq(ok("656 B", U_BYTES), 656);
	cr_expect_eq(ok("141 GB", U_BYTES), 141e9);
	cr_expect_eq(ok("4 TB", U_BYTES), 4e12);
	cr_expect_eq(ok("1 KiB", U_BYTES), 1024);
	cr_expect_eq(ok("2 GiB", U_BYTES), 2.0 * 1073741824);
	cr_expect_eq(ok("1.5MB", U_BYTES), 1.5e6);
	cr_expect_eq(ok("  80 GB  ", U_BYTES), 80e9);
}

Test(units, rates_power_time_energy)
{
	cr_expect_eq(ok("4.8 TB/s", U_BW), 4.8e12);
	cr_expect_eq(ok("450 GB/s", U_BW), 450e9);
	cr_expect_eq(ok("989.4 TFLOPS", U_FLOPS), 989.4e12);
	cr_expect_eq(ok("1.5 PFLOPS", U_FLOPS), 1.5e15);
	cr_expect_eq(ok("700 W", U_POWER), 700);
	cr_expect_eq(ok("1.2 kW", U_POWER), 1200);
	cr_expect(fabs(ok("800 ns", U_TIME) - 800e-9) < 1e-18);
	cr_expect(fabs(ok("2 us", U_TIME) - 2e-6) < 1e-18);
	cr_expect(fabs(ok("100 ms", U_TIME) - 0.1) < 1e-15);
	cr_expect(fabs(ok("1.3 pJ/bit", U_EBIT) - 1.3e-12) < 1e-24);
}

Test(units, token_counts)
{
	cr_expect_eq(ok("128K", U_TOKENS), 131072);
	cr_expect_eq(ok("1M", U_TOKENS), 1048576);
	cr_expect_eq(ok("4096", U_TOKENS), 4096);
	cr_expect_eq(ok("128e3", U_TOKENS), 128000);
	bad("1.5", U_TOKENS, "whole");
	bad("128k", U_TOKENS, "unknown unit");
}

Test(units, rejects_non_finite_and_junk)
{
	bad("nan", U_REAL, "finite");
	bad("NaN GB", U_BYTES, "finite");
	bad("inf", U_BW, "finite");
	bad("-Infinity", U_REAL, "finite");
	bad("1e999", U_REAL, "range");
	bad("", U_INT, "empty");
	bad("   ", U_INT, "empty");
	bad("abc", U_INT, "not a number");
	bad("0x10", U_INT, "decimal");
	bad("12abc", U_INT, "unknown unit");
	bad("7.5", U_INT, "whole");
	bad("5 GB/s extra", U_BW, "unknown unit");
}

Test(units, units_required_where_a_bare_number_is_ambiguous)
{
	bad("4.8", U_BW, "missing unit");
	bad("989", U_FLOPS, "missing unit");
	bad("700", U_POWER, "missing unit");
	bad("2", U_TIME, "missing unit");
	bad("1.3", U_EBIT, "missing unit");
	bad("4.8 GB", U_BW, "unknown unit"); /* a size is not a rate */
	bad("3 TB/s", U_BYTES, "unknown unit");
}

Test(units, format_round_trips_readably)
{
	char buf[64];
	unit_format(4.8e12, U_BW, buf, sizeof buf);
	cr_expect_str_eq(buf, "4.8 TB/s");
	unit_format(141e9, U_BYTES, buf, sizeof buf);
	cr_expect_str_eq(buf, "141 GB");
	unit_format(2e-6, U_TIME, buf, sizeof buf);
	cr_expect_str_eq(buf, "2 us");
	unit_format(131072, U_TOKENS, buf, sizeof buf);
	cr_expect_str_eq(buf, "131072");
}

/* An energy per bit or per FLOP takes its largest unit too: the skip of
 * binary units (KiB, GiB/s) once matched the "i" of "bit". */
Test(units, format_energy_takes_the_largest_unit)
{
	char buf[64];
	unit_format(4.1e-12, U_EBIT, buf, sizeof buf);
	cr_expect_str_eq(buf, "4.1 pJ/bit");
	unit_format(500e-15, U_EBIT, buf, sizeof buf);
	cr_expect_str_eq(buf, "500 fJ/bit");
	unit_format(0.3e-12, U_EFLOP, buf, sizeof buf);
	cr_expect_str_eq(buf, "300 fJ/FLOP");
	unit_format(2 * 1073741824.0, U_BYTES, buf, sizeof buf);
	cr_expect_str_eq(buf, "2.147 GB");
}

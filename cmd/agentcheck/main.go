// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Command agentcheck is the fidelity check behind `make check`: it runs the
// built collector over a directory laid out as a home (by default the
// fixture corpus placed into each agent's default location in a temporary
// home; with -home, a user's own home, read only), and prints one table per
// agent — sessions, turns by status, events, unparsed records, duplicate
// event ids, tool calls unanswered and not marked in_progress, orphan spans,
// traces without exactly one root, root spans ending before a child,
// per-session tokens three ways (summed over events, over chat spans, and
// from ccusage) and per-session dollars with gen_ai_cost in the logs
// pipeline and in the traces pipeline, next to ccusage's; over the fixtures
// it also posts the agents' own OTLP log captures (native_otel) through
// otlp → agent_native and compares the events' tokens with the captures'
// and the processor's record counts with the records sent. It exits non-zero
// on any problem or unexplained difference. README.md lists the definitions
// that explain a difference.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	collector := fs.String("collector", "_build/otelcol-agentotel", "the built collector")
	ccusage := fs.String("ccusage", "", "ccusage 20.0.24 (scripts/ensure-ccusage.sh prints its path); empty: no ccusage column")
	var fixtures rootList
	fs.Var(&fixtures, "fixtures", "a fixture corpus root, staged into a temporary home when -home is not set; repeat it for several roots (default ../shared/fixtures)")
	constructed := fs.String("constructed", "testdata/corpus", "the repository's constructed corpus (agents of which no real file is public), staged with the -fixtures roots; \"none\" leaves it out")
	fixturesNew := fs.String("fixtures-new", "", "newer real files, staged with the -fixtures roots: default $AGENTOTEL_FIXTURES_NEW, else fixtures-new beside the first -fixtures root when it exists; \"none\" leaves them out")
	fixturesNext := fs.String("fixtures-next", "", "the newest real files, staged with the -fixtures roots: default $AGENTOTEL_FIXTURES_NEXT, else fixtures-next beside the first -fixtures root when it exists; \"none\" leaves them out")
	home := fs.String("home", "", "a home directory to read as it is, read only (e.g. ~); nothing is written there")
	quiet := fs.Duration("quiet", 0, "how long the collector's outputs must stay unchanged before it is stopped (default 3s for the fixtures, 10s for -home)")
	timeout := fs.Duration("timeout", 10*time.Minute, "the longest the collector may run")
	idle := fs.Duration("turn-idle-timeout", 6*time.Second, "the connector's turn_idle_timeout: the check reads a finished history, so what the default (5m of wall clock) waits for comes out within the run; keep it above the receiver's 5s settle delay")
	keep := fs.Bool("keep", false, "keep the temporary directory (state, events.jsonl, traces.jsonl)")
	native := fs.Bool("native", true, "also post the native OTLP log captures (<fixtures>/native_otel) through otlp → agent_native and compare (fixture roots only)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx := context.Background()

	tmp, err := os.MkdirTemp("", "agentcheck-")
	if err != nil {
		fmt.Fprintln(stderr, "agentcheck:", err)
		return 2
	}
	if *keep {
		fmt.Fprintln(stderr, "agentcheck: outputs kept in", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	var notes, roots []string
	var dataDirs map[agentevent.Source][]string
	dir := *home
	staged := dir == ""
	if *quiet == 0 {
		*quiet = 3 * time.Second
		if !staged {
			*quiet = 10 * time.Second
		}
	}
	if staged {
		dir = tmp + "/home"
		roots = fixtureRoots(fixtures, []string{*fixturesNew, *fixturesNext}, *constructed)
		st, errStage := stageFixtures(roots, dir)
		if errStage != nil {
			fmt.Fprintln(stderr, "agentcheck: staging the fixtures:", errStage)
			return 2
		}
		notes, dataDirs = st.notes, st.dataDirs
		fmt.Fprintln(stdout, "fixture roots:", strings.Join(roots, ", "))
	} else if strings.HasPrefix(dir, "~") {
		h, _ := os.UserHomeDir()
		dir = h + dir[1:]
	}
	out := tmp + "/out"
	if err = os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(stderr, "agentcheck:", err)
		return 2
	}
	if *quiet <= *idle {
		*quiet = *idle + time.Second
	}
	o, err := runCollector(ctx, *collector, dir, staged, dataDirs, out, *idle, *quiet, *timeout)
	if err != nil {
		fmt.Fprintln(stderr, "agentcheck:", err)
		return 2
	}

	bySource := map[agentevent.Source][]agentevent.Event{}
	for i := range o.events {
		src := o.events[i].Source
		bySource[src] = append(bySource[src], o.events[i])
	}
	byService := map[string][]span{}
	for _, s := range o.spans {
		byService[s.service] = append(byService[s.service], s)
	}
	pricedByService := map[string][]span{}
	for _, s := range o.priced {
		pricedByService[s.service] = append(pricedByService[s.service], s)
	}
	var failures []string
	var reports []*report
	for _, d := range agents.All() {
		src := d.Source
		evs := bySource[src]
		var cc []ccSession
		if d.Ccusage != nil && *ccusage != "" && len(evs) > 0 {
			if cc, err = runCcusage(ctx, *ccusage, d, dir, staged, dataDirs[src]); err != nil {
				fmt.Fprintln(stderr, "agentcheck:", err)
				return 2
			}
			if src == copilotCLI {
				runs, err := copilotRuns(ctx, *ccusage, evs, tmp+"/copilot-runs")
				if err != nil {
					fmt.Fprintln(stderr, "agentcheck:", err)
					return 2
				}
				cc = replaceSessions(cc, runs)
			}
		}
		if len(evs) == 0 && len(cc) == 0 {
			continue
		}
		r := analyze(src, evs, byService[src.ServiceName()], pricedByService[src.ServiceName()], cc)
		printReport(stdout, r, *ccusage != "")
		failures = append(failures, r.failures()...)
		reports = append(reports, r)
	}
	printSummary(stdout, reports, *ccusage != "")
	nativeRan := false
	if *native && staged {
		nr, note, err := checkNative(ctx, *collector, roots, out, *timeout)
		if err != nil {
			fmt.Fprintln(stderr, "agentcheck:", err)
			return 2
		}
		if note != "" {
			notes = append(notes, note)
		}
		if len(nr) > 0 {
			nativeRan = true
			printNative(stdout, nr)
			for _, r := range nr {
				failures = append(failures, r.failures()...)
			}
		}
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	if len(failures) > 0 {
		fmt.Fprintf(stdout, "\nFAIL: %d problem(s)\n", len(failures))
		for _, f := range failures {
			fmt.Fprintln(stdout, "  "+f)
		}
		return 1
	}
	ok := "\nOK: every session's event and span tokens agree with each other and with ccusage, and its dollars in both placements of gen_ai_cost with each other and with ccusage, up to the documented definitions"
	if nativeRan {
		ok += "; every native OTLP record is accounted for and the native events' tokens are the captures'"
	}
	fmt.Fprintln(stdout, ok)
	return 0
}

// replaceSessions puts each session of with in place of ccusage's
// sessions under its key.
func replaceSessions(cc []ccSession, with map[string]ccSession) []ccSession {
	if len(with) == 0 {
		return cc
	}
	var out []ccSession
	for _, s := range cc {
		if _, ok := with[s.Key]; !ok {
			out = append(out, s)
		}
	}
	for _, k := range slices.Sorted(mapKeys(with)) {
		out = append(out, with[k])
	}
	return out
}

// rootList is the repeatable -fixtures flag.
type rootList []string

func (l *rootList) String() string { return strings.Join(*l, ",") }

func (l *rootList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// newerRoots are the folders of newer real files beside a corpus root, in
// the order they are staged, each with the variable that names it
// elsewhere (as the tests' testenv.NewerFixtures).
var newerRoots = []struct{ name, env string }{
	{"fixtures-new", "AGENTOTEL_FIXTURES_NEW"},
	{"fixtures-next", "AGENTOTEL_FIXTURES_NEXT"},
}

// fixtureRoots are the roots to stage: the -fixtures roots (default
// ../shared/fixtures); the newer real files of each of newerRoots — its
// flag's value (newer, in the same order), else its variable, else the
// folder of its name beside the first root when it exists — unless that is
// "none" or already a root; and the repository's constructed corpus when it
// exists (unless "none" or already a root).
func fixtureRoots(fixtures rootList, newer []string, constructed string) []string {
	roots := slices.Clone([]string(fixtures))
	if len(roots) == 0 {
		roots = []string{"../shared/fixtures"}
	}
	var extra []string
	for i, n := range newerRoots {
		dir := ""
		if i < len(newer) {
			dir = newer[i]
		}
		if dir == "" {
			dir = os.Getenv(n.env)
		}
		if dir == "" {
			dir = filepath.Join(filepath.Dir(filepath.Clean(roots[0])), n.name)
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
		}
		extra = append(extra, dir)
	}
	if fi, err := os.Stat(constructed); err == nil && fi.IsDir() {
		extra = append(extra, constructed)
	}
	for _, r := range extra {
		if r != "none" && !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return roots
}

func printReport(w io.Writer, r *report, withCcusage bool) {
	fmt.Fprintf(w, "\n== %s\n", r.Agent)
	var statuses []string
	for _, s := range slices.Sorted(mapKeys(r.TurnsByStatus)) {
		statuses = append(statuses, fmt.Sprintf("%s %d", s, r.TurnsByStatus[s]))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "sessions\t%d\n", r.Sessions)
	fmt.Fprintf(tw, "turns\t%s\n", strings.Join(statuses, ", "))
	fmt.Fprintf(tw, "events\t%d\n", r.Events)
	fmt.Fprintf(tw, "unparsed records\t%d\n", r.Unparsed)
	fmt.Fprintf(tw, "duplicate event ids\t%d\n", r.DuplicateIDs)
	fmt.Fprintf(tw, "tool calls unanswered, not marked in_progress\t%d\n", r.UnmarkedOpen)
	fmt.Fprintf(tw, "orphan spans\t%d\n", r.OrphanSpans)
	fmt.Fprintf(tw, "traces without exactly one root\t%d\n", r.BadRootTraces)
	fmt.Fprintf(tw, "root spans ending before a child\t%d\n", r.RootEndsEarly)
	_ = tw.Flush()

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "session\tevents in/out/cache r/cache w\tchat spans\t"
	if withCcusage {
		head += "ccusage\tdefinitions\t"
	}
	fmt.Fprintln(tw, head+"")
	for i := range r.Rows {
		row := &r.Rows[i]
		line := fmt.Sprintf("%s\t%s\t%s\t", short(row.Session), cells(row.Events), mark(cells(row.Spans), row.Spans == row.Events))
		if withCcusage {
			cc, defs := "-", strings.Join(row.Definitions, ",")
			if row.HasCcusage {
				cc = mark(cells(row.Ccusage), row.Ccusage == row.Events)
			}
			line += cc + "\t" + defs + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head = "session\t$ events (logs pipeline)\t$ chat spans (logs pipeline)\t$ chat spans (traces pipeline)\t"
	if withCcusage {
		head += "$ ccusage\tdefinitions\t"
	}
	fmt.Fprintln(tw, head)
	var total dollars
	for i := range r.Rows {
		row := &r.Rows[i]
		c := row.Cost
		total.Events += c.Events
		total.LogsChat += c.LogsChat
		total.TracesChat += c.TracesChat
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t", short(row.Session), usd(c.Events),
			mark(usd(c.LogsChat), sameDollars(c.LogsChat, c.Events)), mark(usd(c.TracesChat), sameDollars(c.TracesChat, c.LogsChat)))
		if withCcusage {
			cc := "-"
			if c.HasCcusage {
				total.Ccusage += c.Ccusage
				cc = mark(usd(c.Ccusage), sameDollars(c.Ccusage, c.Events))
				if !sameDollars(c.Ccusage, c.CcusageReported) {
					cc = fmt.Sprintf("%s (reported %s)", cc, usd(c.CcusageReported))
				}
			}
			line += cc + "\t" + strings.Join(row.CostDefinitions, ",") + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	line := fmt.Sprintf("total\t%s\t%s\t%s\t", usd(total.Events), usd(total.LogsChat), usd(total.TracesChat))
	if withCcusage {
		line += usd(total.Ccusage) + "\t\t"
	}
	fmt.Fprintln(tw, line)
	_ = tw.Flush()
}

// printSummary prints one line per agent: its sessions, the tokens of its
// events, and its dollars in both placements of gen_ai_cost and ccusage's
// (of the sessions ccusage reports, the definitions applied).
func printSummary(w io.Writer, reports []*report, withCcusage bool) {
	fmt.Fprintf(w, "\n== summary\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "agent\tsessions\tevents in/out/cache r/cache w\t$ logs pipeline\t$ traces pipeline\t"
	if withCcusage {
		head += "$ ccusage\t"
	}
	fmt.Fprintln(tw, head+"problems\t")
	for _, r := range reports {
		var t tokens
		var d dollars
		for i := range r.Rows {
			row := &r.Rows[i]
			t.add(row.Events)
			d.Events += row.Cost.Events
			d.TracesChat += row.Cost.TracesChat
			if row.Cost.HasCcusage {
				d.Ccusage += row.Cost.Ccusage
			}
		}
		line := fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t", r.Agent, r.Sessions, cells(t), usd(d.Events), usd(d.TracesChat))
		if withCcusage {
			line += usd(d.Ccusage) + "\t"
		}
		fmt.Fprintln(tw, line+fmt.Sprint(len(r.failures()))+"\t")
	}
	_ = tw.Flush()
}

func usd(v float64) string { return fmt.Sprintf("$%.4f", v) }

func cells(t tokens) string {
	return fmt.Sprintf("%d/%d/%d/%d", t.Input, t.Output, t.CacheRead, t.CacheCreation)
}

func mark(s string, ok bool) string {
	if ok {
		return s
	}
	return s + " ≠"
}

func short(s string) string {
	if len(s) > 40 {
		return s[:37] + "…"
	}
	return s
}

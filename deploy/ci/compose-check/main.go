// compose-check: `docker compose config` without Docker. It loads a compose file with
// compose-go (the loader of Docker Compose v2: schema validation, interpolation with
// ${VAR:?error}, merge keys, consistency checks such as depends_on targets) and prints the
// resolved model as YAML (or nothing with -q). Exit status 1 with the loader's message on error.
//
//	compose-check [-q] [-no-dotenv] [-p project] [-f docker-compose.yml]...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
)

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	var configs files
	quiet := flag.Bool("q", false, "only validate, print nothing")
	project := flag.String("p", "", "project name (default: the file's name: or the directory)")
	noDotEnv := flag.Bool("no-dotenv", false, "do not read ./.env (only the process environment)")
	flag.Var(&configs, "f", "compose file (repeatable; default: compose.yaml / docker-compose.yml)")
	flag.Parse()

	var fns []cli.ProjectOptionsFn
	if len(configs) == 0 {
		fns = append(fns, cli.WithDefaultConfigPath)
	}
	fns = append(fns, cli.WithOsEnv)
	if !*noDotEnv {
		fns = append(fns, cli.WithEnvFiles(), cli.WithDotEnv) // ./.env, as docker compose reads it
	}
	fns = append(fns, cli.WithConsistency(true), cli.WithResolvedPaths(true))
	if *project != "" {
		fns = append(fns, cli.WithName(*project))
	}
	opts, err := cli.NewProjectOptions(configs, fns...)
	if err != nil {
		fail(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	if *quiet {
		return
	}
	out, err := p.MarshalYAML()
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compose-check:", err)
	os.Exit(1)
}

// Command resume: see the README, or run 'resume --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/pkg/cmd/resume"
	"github.com/teamkit/teamkit/pkg/command"
)

func main() { os.Exit(command.Main(resume.App)) }

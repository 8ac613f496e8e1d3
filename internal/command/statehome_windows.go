package command

import (
	"os"
	"path/filepath"
)

// osStateHomeVar names the directory Windows keeps per-user, per-machine
// application data in (C:\Users\NAME\AppData\Local): the mailbox
// defaults to %LOCALAPPDATA%\teamkit\teamkit.db there.
const osStateHomeVar = "LOCALAPPDATA"

// homeOfUser is "": Windows has %LOCALAPPDATA% and %USERPROFILE%.
func homeOfUser() string { return "" }

// privateTempState is teamkit-state in the user's temporary directory,
// which on Windows is the user's own (%TEMP%, under the profile).
func privateTempState() string { return filepath.Join(os.TempDir(), "teamkit-state") }

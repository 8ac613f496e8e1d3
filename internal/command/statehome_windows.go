package command

// osStateHomeVar names the directory Windows keeps per-user, per-machine
// application data in (C:\Users\NAME\AppData\Local): the mailbox
// defaults to %LOCALAPPDATA%\teamkit\teamkit.db there.
const osStateHomeVar = "LOCALAPPDATA"

"""The user's workspace: their own targets, captures and calibrations, found
by every command as a plugin's shipped files are (``location`` says where)."""

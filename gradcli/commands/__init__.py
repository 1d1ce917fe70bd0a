"""The commands: one pure function per command, a bound program in, a frozen result out."""

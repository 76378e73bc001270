"""What this host is and holds, read from it: the machine (/proc/cpuinfo, the CPUs this process
may use, its name), its memory (/proc/meminfo), the MPI libraries installed beside this Python
and their prefixes, and tuning files on disk.

runners.domain stays pure: its functions take what is read here as arguments (a core count, the
memory available, a library's Install, a tuning file's text). The sweep, the CLI, the analysis
and the store's journal read the host through this package; the domain and the ranks never
import it. No MPI here.
"""

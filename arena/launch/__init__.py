"""Bot launching: the bot list format (:mod:`.botlist`), what a bot's jail shows it (:mod:`.jail`), one bot
process (:mod:`.process`), a seat's session (:mod:`.session`) and a table's warm process pool (:mod:`.pool`); the
jail's isolation and limits (:mod:`.sandbox`) and the supervisor that runs every bot under them
(``supervisor.c``, found or built by :mod:`.native`; what it shares with the arena in :mod:`.supervisor_constants`),
the machine's processes (:mod:`.procs`), the jail's seccomp filter (:mod:`.jailfilter`), the loopback-only network
namespace (:mod:`.netns`), and one match between launched bots (:mod:`.runner`)."""

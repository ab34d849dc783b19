"""Bot launching: bot lists, processes, a seat's session and the warm process pool (:mod:`.launcher`), the
jail's policy and the supervisor that runs every bot under it (:mod:`.sandbox`; the supervisor part runs as a
standard-library-only script), the jail's seccomp filter (:mod:`.jailfilter`), the loopback-only network
namespace (:mod:`.netns`), and one match between launched bots (:mod:`.runner`)."""

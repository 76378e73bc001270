// SMPI's trace replay program, for `collsweep workload export --format smpi` traces:
//   smpicxx -std=c++17 -O2 -o smpi_replay data/smpi_replay.cpp
//   smpirun -np P -platform PLATFORM.xml -hostfile HOSTS -replay OUT/index.txt ./smpi_replay
// (SimGrid's own replay example, examples/smpi/replay, reduced to what it needs.)
#include <simgrid/s4u/Actor.hpp>
#include <smpi/smpi.h>
#include <xbt/str.h>

int main(int argc, char* argv[])
{
  const auto* self = simgrid::s4u::Actor::self();
  const char* instance_id = self->get_property("instance_id");
  const int rank = xbt_str_parse_int(self->get_property("rank"), "cannot parse the rank");
  smpi_replay_init(instance_id, rank, 0);
  smpi_replay_main(rank, argc > 1 ? argv[1] : nullptr);
  return 0;
}

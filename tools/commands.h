// The tessel subcommands (one file each).
#ifndef TESSEL_TOOLS_COMMANDS_H_
#define TESSEL_TOOLS_COMMANDS_H_

namespace tessel {

int RunCommand(int argc, char** argv);
int InspectCommand(int argc, char** argv);
int OptCommand(int argc, char** argv);
int CompileCommand(int argc, char** argv);
int BenchCommand(int argc, char** argv);
int ClassifyCommand(int argc, char** argv);

}  // namespace tessel

#endif  // TESSEL_TOOLS_COMMANDS_H_

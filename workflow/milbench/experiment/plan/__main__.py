from milbench.experiment.plan.cli import main

main()

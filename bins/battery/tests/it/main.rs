mod run;
